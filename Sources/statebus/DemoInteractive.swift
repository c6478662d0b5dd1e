import Foundation
import StateBusCommandLine
import StateBusDemo
import StateBusLaunch

/// `statebus demo --interactive`: one of the demo apps under the launcher, with the person at
/// the terminal as one of its views ("you"): each line typed is that view's edit, and every
/// node's rendering is shown as it changes.
extension DemoScenario {
    /// Which app the demo plays (or the interactive session runs).
    enum InteractiveApp: String, CaseIterable {
        case sharedText = "shared-text"
        case profile
        case todo
        case ha
    }

    /// Runs the session until standard input ends, `quit` is typed, or SIGINT/SIGTERM.
    /// - Returns: the launcher's exit code (0 when no node failed).
    func interactive(_ app: InteractiveApp) async throws -> Int32 {
        let (yaml, help) = Self.topology(app, folder: folder)
        let (launcher, run, stop) = try launch(yaml, name: "interactive")
        defer { stop() }
        let you = try await node(launcher, "you")
        try await you.waitForLine("your view's first rendering", timeout: deadline) { $0.hasPrefix("[you] ") }
        emit("")
        for line in help { emit("» \(line)") }
        emit("» Type 'quit' or press Ctrl-D to stop every node.\n")

        // Whichever comes first ends the session: the end of typing, or a stop signal.
        let (ended, end) = AsyncStream<Void>.makeStream()
        let trap = SignalTrap.stopSignals()
        Task {
            await trap.wait()
            end.finish()
        }
        Task {
            for await line in DemoNode.standardInputLines() {
                if line.trimmingCharacters(in: .whitespaces) == "quit" { break }
                you.send(line: line)
            }
            end.finish()
        }
        for await _ in ended {}
        stop()
        return try await run.value
    }

    /// The launch file of a session, and what to tell the person.
    static func topology(_ app: InteractiveApp, folder: String) -> (yaml: String, help: [String]) {
        switch app {
        case .sharedText, .ha:
            let yaml = DemoTopology.sharedText(
                name: "interactive", folder: folder, views: ["you", "first", "second"].map { DemoTopology.View(name: $0) }, respawnViews: false)
            return (
                yaml,
                [
                    "You are the view 'you' of the shared-text app; 'first' and 'second' are views in other processes.",
                    "Type a line and press Enter: it becomes the shared text, and every view shows it."
                ]
            )
        case .profile:
            let yaml = DemoTopology.profile(
                name: "interactive", folder: folder, views: [.init(name: "you", screen: "edit"), .init(name: "profile", screen: "profile")],
                respawnHost: false)
            return (
                yaml,
                [
                    "You are the editing view 'you' of the profile app; 'profile' shows the profile in another process.",
                    "Type: username NAME, email ADDRESS (an address without @ is rejected by the host), toggle, retry, dismiss."
                ]
            )
        case .todo:
            let yaml = DemoTopology.todo(
                name: "interactive", folder: folder,
                views: [
                    .init(name: "you", screen: "list"), .init(name: "editor", screen: "editor", item: "t2"), .init(name: "counter", screen: "counter")
                ],
                respawnViews: false)
            return (
                yaml,
                [
                    "You are the list view 'you' of the to-do app; 'editor' (bound to t2) and 'counter' are views in other processes.",
                    "Type: add TITLE, title ID TEXT, done ID, undo ID, move ID POSITION, remove ID; new TITLE and clear call host actions."
                ]
            )
        }
    }
}
