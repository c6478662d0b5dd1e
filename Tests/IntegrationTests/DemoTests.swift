import Foundation
import StateBusTesting
import Testing

@Suite("The demo")
struct DemoTests {
    @Test("`statebus demo` plays its scenario and every view converges")
    func demoConverges() async throws {
        let demo = try NodeProcess(executable: try BuiltProducts.executable("statebus"), arguments: ["demo"], name: "demo")
        defer { demo.terminate() }
        // Either verdict ends the wait: a failing demo fails the test at once, with its output.
        try await demo.waitForLine("the convergence verdict", timeout: .seconds(150)) {
            $0.contains("converged on its host") || $0.contains("did not converge")
        }
        #expect(try await demo.exited() == 0, "\(demo.output.suffix(20))")
        let output = demo.output
        #expect(output.contains("every node converged on its host's state"))
        // Shared text: every view's final row shows the edit made while the second was down,
        // the Python client's view too when the test command installed it (STATEBUS_PYTHON).
        let python = ProcessInfo.processInfo.environment["STATEBUS_PYTHON"] != nil
        if python { #expect(output.contains { $0.contains("[python] python view: edited in python") }, "the Python view's own edit") }
        for name in ["host", "first", "second", "third"] + (python ? ["python"] : []) {
            #expect(output.contains { $0.hasPrefix(name) && $0.hasSuffix("| edited while second was down") }, "\(name) missing from the final table")
        }
        // Profile: the rejected email is shown as an error, and the host's restart restores
        // the persisted setting while the rest starts over.
        #expect(output.contains { $0.contains("Error: 'bea-at-example' is not a valid email") })
        #expect(output.contains { $0.hasPrefix("notifications") && $0.hasSuffix("| Notifications toggle: [x]") })
        #expect(output.contains { $0.hasPrefix("editor") && $0.hasSuffix("| Email field: anna@example.com") })
        #expect(output.contains { $0.hasPrefix("host") && $0.hasSuffix("isNotificationEnabled = true") })
        // To-do: the host action ran, and the final table holds the list every view shows.
        #expect(output.contains { $0.contains("the host cleared 1 done items") })
        #expect(output.contains { $0.hasPrefix("host") && $0.hasSuffix("| t3, list-1, list-2; 3 open") }, "\(output.suffix(12))")
        #expect(
            output.contains {
                $0.hasPrefix("list") && $0.hasSuffix("| [ ] t3 call the plumber, [ ] list-1 water the plants, [ ] list-2 take out the bins")
            })
        #expect(output.contains { $0.hasPrefix("counter") && $0.hasSuffix("| Open items: 3") })
        // High availability: the leader was killed, another host led, every view followed.
        let terms = output.drop { !$0.hasPrefix("who led when") }.prefix { !$0.isEmpty }.filter { $0.hasPrefix("host-") }
        #expect(terms.count == 2, "\(terms)")
        for name in ["first", "second", "third"] {
            #expect(output.contains { $0.hasPrefix(name) && $0.hasSuffix("| the group survived a kill") }, "\(name) missing from the group's table")
        }
    }

    @Test("without a usable Python the shared text leaves its Python view out and says why; a named one must work")
    func pythonViewLeftOutOrRefused() async throws {
        let statebus = try BuiltProducts.executable("statebus")
        // An interpreter that cannot import the client (it exits 1 at once).
        let without = try await OneShotCommand.run(
            statebus, ["demo", "--app", "shared-text"], environment: ["STATEBUS_PYTHON": "/bin/false"], timeout: .seconds(150))
        #expect(without.status == 0, "\(without.output.suffix(10))")
        #expect(
            without.output.contains { $0.contains("(the Python view is left out: /bin/false (STATEBUS_PYTHON) has no StateBus Python client") },
            "\(without.output.prefix(5))")
        #expect(!without.output.contains { $0.hasPrefix("python ") })
        let named = try await OneShotCommand.run(statebus, ["demo", "--app", "shared-text", "--python", "/nonexistent/python3"])
        #expect(named.status != 0)
        #expect(named.output.contains { $0.contains("no executable file '/nonexistent/python3' (--python)") }, "\(named.output)")
        #expect(!named.output.contains { $0.contains("launch: started") }, "nothing starts before the refusal")
    }

    @Test("`statebus demo --app todo` plays the to-do app alone")
    func todoAlone() async throws {
        let demo = try NodeProcess(executable: try BuiltProducts.executable("statebus"), arguments: ["demo", "--app", "todo"], name: "demo")
        defer { demo.terminate() }
        #expect(try await demo.exited(timeout: .seconds(90)) == 0, "\(demo.output.suffix(20))")
        #expect(demo.output.contains("every node converged on its host's state"))
        #expect(!demo.output.contains { $0.contains("== 1. Shared text") }, "only the to-do app plays")
        #expect(demo.output.contains { $0.contains("== 3. To-do list") })
    }

    @Test("`statebus demo --interactive` under a pseudo-terminal: a typed line reaches every view")
    func interactiveDemo() async throws {
        // script(1) runs the demo on a pseudo-terminal and forwards what we write as typing.
        let script = URL(fileURLWithPath: "/usr/bin/script")
        try #require(FileManager.default.isExecutableFile(atPath: script.path), "script (util-linux) provides the pseudo-terminal")
        let statebus = try BuiltProducts.executable("statebus")
        let terminal = try NodeProcess(executable: script, arguments: ["-qfec", "\(statebus.path) demo --interactive", "/dev/null"], name: "terminal")
        defer { terminal.terminate() }
        try await terminal.waitForLine("the prompt", timeout: .seconds(60)) { $0.contains("Type a line and press Enter") }
        terminal.send(line: "typed at the terminal")
        for view in ["you", "first", "second"] {
            try await terminal.waitForLine("\(view) showing the typed line") {
                $0.contains("\(view) | [\(view)] \(view) view: typed at the terminal")
            }
        }
        terminal.send(line: "quit")
        #expect(try await terminal.exited(timeout: .seconds(60)) == 0, "\(terminal.output.suffix(10))")
        #expect(terminal.output.contains { $0.contains("launch: stopping 4 nodes") })
    }

    @Test("the demo's and the recorder's waits follow STATEBUS_TIMEOUT; a bad value is refused naming it")
    func waitsFollowTheEnvironment() async throws {
        let statebus = try BuiltProducts.executable("statebus")
        let refused = try await OneShotCommand.run(statebus, ["demo", "--app", "todo"], environment: ["STATEBUS_TIMEOUT": "soon"])
        #expect(refused.status != 0)
        #expect(
            refused.output.contains { $0.contains("STATEBUS_TIMEOUT must be a positive number of seconds (such as 30 or 2.5), got 'soon'") },
            "\(refused.output)")
        let help = try await OneShotCommand.run(statebus, ["demo", "--help"])
        let helpText = help.output.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        #expect(helpText.contains("(default: $STATEBUS_TIMEOUT, else 60)"), "\(help.output)")
        // A recorder with nobody to record waits as long as the variable says, and says so.
        let folder = "/tmp/sbw-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let recorder = try await OneShotCommand.run(
            statebus, ["record", "--control", "ipc://\(folder)/nobody", "--object", "Counter", "--out", "\(folder)/r.jsonl"],
            environment: ["STATEBUS_TIMEOUT": "1.5"])
        #expect(recorder.status != 0)
        #expect(recorder.output.contains { $0.contains("within 1.5 seconds") }, "\(recorder.output)")
    }

    @Test("a view edits from its standard input and a rejected edit is reported")
    func interactiveView() async throws {
        let folder = "/tmp/sbv-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let statebus = try BuiltProducts.executable("statebus")
        let host = try NodeProcess(
            executable: statebus,
            arguments: [
                "host", "--control", "ipc://\(folder)/c", "--object", "Counter", "--property", "count:int=0", "--property", "label:string!=fixed"
            ], name: "host")
        defer { host.terminate() }
        try await host.waitForLine("ready") { $0.hasPrefix("ready ") }
        let view = try NodeProcess(
            executable: statebus,
            arguments: [
                "view", "--control", "ipc://\(folder)/c", "--object", "Counter", "--property", "count", "--json-input", "--name", "pad"
            ], name: "view")
        defer { view.terminate() }
        try await view.waitForLine("live") { $0 == "[pad] live" }
        view.send(line: "41")
        try await view.waitForLine("the edit") { $0.hasPrefix("[pad] count = 41") }
        let beforeBadEdit = view.lineCount
        view.send(line: "\"not a number\"")
        // Shown at once (optimistic), then rejected by the host and rolled back.
        try await view.waitForLine("the optimistic edit", after: beforeBadEdit) { $0.hasPrefix("[pad] count = \"not a number\"") }
        let rejection = try await view.waitForLine("the rejection", after: beforeBadEdit) { $0.contains("rejected") }
        #expect(rejection.contains("typeMismatch"))
        try await view.waitForLine("the rollback", after: beforeBadEdit) { $0.hasPrefix("[pad] count = 41") }
    }
}
