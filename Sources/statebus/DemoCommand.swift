import ArgumentParser
import Foundation
import StateBusLaunch

/// `statebus demo`: the shared-text app of the SwiftUI examples, one process per node.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the shared-text demo: a host and three views, each a real process.",
        discussion: """
            A host owns SharedData.sharedText (the @EnvironmentObject of the SwiftUI example); \
            three views (first, second, third) show it and edit it. The scripted scenario edits \
            from every view, kills one view and starts it again, and ends with a table of every \
            node's final state. Exits 0 only if every node converged.

            Examples:
              statebus demo
              statebus demo --timeout 60
            """
    )

    @Option(name: .long, help: "Seconds to wait for each step.")
    var timeout: Double = 20

    func run() async throws {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("statebus-demo-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let control = "ipc://\(folder)/control"
        let deadline = Duration.milliseconds(Int(timeout * 1000))

        emit("== StateBus demo: shared text across processes ==")
        let host = try NodeProcess(executable: executable, arguments: [
            "host", "--name", "demo", "--control", control, "--object", "SharedData",
            "--property", "sharedText:string=Hello from the host", "--heartbeat-ms", "200",
        ], name: "host")
        defer { host.terminate() }
        try await host.waitForLine("ready", timeout: deadline) { $0.hasPrefix("ready ") }
        emit("host      pid \(host.pid) serves SharedData at \(control)")

        let names = ["first", "second", "third"]
        let views = try names.map { name in
            try NodeProcess(executable: executable, arguments: [
                "view", "--control", control, "--object", "SharedData", "--property", "sharedText", "--name", name,
            ], name: name)
        }
        defer { views.forEach { $0.terminate() } }
        var shown = [Int](repeating: 0, count: views.count)
        func showNewLines() {
            for (index, view) in views.enumerated() {
                let lines = view.output
                for line in lines[min(shown[index], lines.count)...] where !line.contains(" info ") { emit("  \(line)") }
                shown[index] = lines.count
            }
        }
        func waitAll(showing text: String) async throws {
            for view in views {
                try await view.waitForLine("sharedText = \"\(text)\"", timeout: deadline) { $0.contains("sharedText = \"\(text)\"") }
            }
            showNewLines()
        }

        emit("\n-- three views join and render the host's text")
        try await waitAll(showing: "Hello from the host")

        for (index, name) in names.enumerated() {
            let text = "edited in \(name)"
            emit("\n-- the \(name) view edits: \(text)")
            views[index].send(line: text)
            try await waitAll(showing: text)
        }

        emit("\n-- the second view is killed (SIGKILL); the first edits meanwhile")
        views[1].kill()
        views[0].send(line: "edited while second was down")
        for view in [views[0], views[2]] {
            try await view.waitForLine("the edit", timeout: deadline) { $0.contains("edited while second was down") }
        }
        emit("-- the second view starts again and catches up")
        try views[1].start()
        try await waitAll(showing: "edited while second was down")

        emit("\n== final state ==")
        let final = views.map { view in view.output.last { $0.contains("sharedText = ") } ?? "" }
        emit("node     | sharedText")
        emit("---------+-----------------------------")
        for (name, line) in zip(names, final) {
            let value = line.components(separatedBy: "sharedText = ").last?.components(separatedBy: " (sequence").first ?? "?"
            emit("\(name.padding(toLength: 8, withPad: " ", startingAt: 0)) | \(value)")
        }
        let values = Set(final.map { $0.components(separatedBy: "sharedText = ").last?.components(separatedBy: " (sequence").first ?? "" })
        if values.count == 1 {
            emit("\nall \(views.count) views converged on the host's value")
        } else {
            emit("\nthe views did not converge")
            throw ExitCode(1)
        }
    }
}
