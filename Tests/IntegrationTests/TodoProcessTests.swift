import Foundation
import StateBusTesting
import Testing

/// The to-do app's keyed collection across real processes: `statebus node todo` host and
/// views, edits typed into the views, the host's state read with `statebus get`.
@Suite("Keyed collections: element by element across processes")
struct TodoProcessTests {

    /// The to-do host and two list views, in a new folder.
    static func start() async throws -> (host: NodeProcess, views: [NodeProcess], control: String, folder: String) {
        let folder = "/tmp/sbt-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let control = "ipc://\(folder)/todo"
        let statebus = try BuiltProducts.executable("statebus")
        let host = try NodeProcess(
            executable: statebus, arguments: ["node", "todo", "--role", "host", "--control", control, "--database", "\(folder)/todo.sqlite"],
            name: "host")
        var views: [NodeProcess] = []
        do {
            try await host.waitForLine("the host ready") { $0.hasPrefix("ready ") }
            for name in ["first", "second"] {
                let view = try NodeProcess(
                    executable: statebus, arguments: ["node", "todo", "--role", "view", "--name", name, "--control", control], name: name)
                views.append(view)
                try await view.waitForLine("\(name)'s first render") { $0.contains("[ ] t3 call the plumber") }
            }
        } catch {
            // The caller never gets them, so its cleanup cannot end them; left to their
            // deinit, whose SIGKILL waits on a detached thread, two hosts that ignored SIGTERM
            // under load outlived a failed test run.
            for view in views { view.terminate() }
            host.terminate()
            throw error
        }
        return (host, views, control, folder)
    }

    @Test("edits of different items made by two views while the host is stopped both survive, with an insert and a move")
    func concurrentEditsOfDifferentItems() async throws {
        let (host, views, control, folder) = try await Self.start()
        defer {
            for view in views { view.terminate() }
            host.terminate()
            try? FileManager.default.removeItem(atPath: folder)
        }
        let (first, second) = (views[0], views[1])
        // Stopped, the host orders nothing: each view edits the list as it last saw it, as two
        // people would at the same moment. Whole-list writes would keep only the later one.
        host.pause()
        first.send(line: "title t1 buy oat milk")
        second.send(line: "done t2")
        second.send(line: "add fix the bike")
        first.send(line: "move t3 0")
        try await first.waitForLine("first's own edits shown") { $0.contains("[ ] t1 buy oat milk") }
        try await second.waitForLine("second's own edits shown") { $0.contains("[ ] second-1 fix the bike") }
        host.resume()
        let expected = [
            "  [ ] t3 call the plumber", "  [ ] t1 buy oat milk", "  [x] t2 write the report", "  [ ] second-1 fix the bike"
        ]
        for view in views {
            try await view.waitForLine("\(view.name) converged", timeout: .seconds(30)) { _ in
                Self.lastList(of: view) == expected
            }
        }
        let run = try await runStatebus(["get", "--control", control, "--object", "TodoList", "todos"])
        #expect(run.status == 0)
        #expect(
            run.output.last
                == #"[{"done": false, "id": "t3", "title": "call the plumber"}, {"done": false, "id": "t1", "title": "buy oat milk"}, {"done": true, "id": "t2", "title": "write the report"}, {"done": false, "id": "second-1", "title": "fix the bike"}]"#,
            "\(run.output)")
    }

    @Test("an edit of an item another view removed is refused with the reason, and no view keeps it")
    func editOfARemovedItem() async throws {
        let (host, views, control, folder) = try await Self.start()
        defer {
            for view in views { view.terminate() }
            host.terminate()
            try? FileManager.default.removeItem(atPath: folder)
        }
        views[0].send(line: "remove t2")
        for view in views {
            try await view.waitForLine("\(view.name) without t2") { $0.contains("To-do (2):") }
        }
        var run = try await runStatebus(["set", "--control", control, "--object", "TodoList", #"todos[id="t2"].title"#, #""too late""#])
        #expect(run.status == 1)
        #expect(
            run.output.contains { $0.contains("invalidPath") && $0.contains(#"no element with id "t2" (another writer may have removed it)"#) },
            "\(run.output)")
        // The element validator sees the element written, and refuses a blank title.
        run = try await runStatebus(["set", "--control", control, "--object", "TodoList", #"todos[id="t3"].title"#, #""   ""#])
        #expect(run.status == 1)
        #expect(run.output.contains { $0.contains("validationFailed") && $0.contains("to-do t3 needs a title that is not blank") }, "\(run.output)")
        // An edit of an item that is there goes by id, as a path write.
        run = try await runStatebus(["set", "--control", control, "--object", "TodoList", #"todos[id="t3"].done"#, "true"])
        #expect(run.status == 0, "\(run.output)")
        for view in views {
            try await view.waitForLine("\(view.name) shows t3 done") { $0.contains("[x] t3 call the plumber") }
        }
        run = try await runStatebus(["get", "--control", control, "--object", "TodoList", "todos"])
        #expect(run.output.last?.contains("too late") == false)
        #expect(run.output.last?.contains(#""id": "t2""#) == false, "\(run.output)")
    }

    /// The item lines of the last list a view rendered.
    static func lastList(of view: NodeProcess) -> [String] {
        let lines = view.output.map { $0.components(separatedBy: "] ").dropFirst().joined(separator: "] ") }
        guard let start = lines.lastIndex(where: { $0.hasPrefix("To-do (") }) else { return [] }
        return Array(lines[(start + 1)...].prefix { $0.hasPrefix("  [") })
    }
}
