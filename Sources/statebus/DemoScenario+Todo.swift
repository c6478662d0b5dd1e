import Foundation
import StateBus
import StateBusCommandLine
import StateBusLaunch
import StateBusWire

extension DemoScenario {
    /// The to-do app: a keyed collection edited element by element from three views at once,
    /// a host action called from a view, and a view killed and respawned.
    func todo() async throws -> Bool {
        emit("\n== 3. To-do list: host, list view, item editor, open-items counter ==")
        let yaml = DemoTopology.todo(
            name: "todo", folder: folder,
            views: [
                .init(name: "list", screen: "list"), .init(name: "editor", screen: "editor", item: "t2"), .init(name: "counter", screen: "counter")
            ],
            respawnViews: true)
        let (launcher, run, stop) = try launch(yaml, name: "todo")
        defer { stop() }
        let list = try await node(launcher, "list")
        let editor = try await node(launcher, "editor")
        let counter = try await node(launcher, "counter")
        try await list.waitForLine("the first render", timeout: deadline) { $0.contains("[ ] t3 call the plumber") }
        try await editor.waitForLine("the first render", timeout: deadline) { $0.contains("Editing t2: write the report [open]") }
        try await counter.waitForLine("the first render", timeout: deadline) { $0.contains("Open items: 3") }

        emit("\n-- at once: the editor retitles t2, the list completes t1 and adds an item: three element operations, all kept")
        editor.send(line: "title t2 write the final report")
        list.send(line: "done t1")
        list.send(line: "add water the plants")
        try await list.waitForLine("every edit", timeout: deadline) { $0.contains("[ ] t2 write the final report") }
        try await list.waitForLine("every edit", timeout: deadline) { $0.contains("[x] t1 buy milk") }
        try await list.waitForLine("every edit", timeout: deadline) { $0.contains("[ ] list-1 water the plants") }
        try await counter.waitForLine("the count", timeout: deadline) { $0.contains("Open items: 3") }

        emit("\n-- the list moves t3 to the top")
        var mark = list.lineCount
        list.send(line: "move t3 0")
        try await list.waitForLine("the move", after: mark, timeout: deadline) { $0.contains("To-do (4):") }
        try await list.waitForLine("t3 first", after: mark, timeout: deadline) { $0.contains("[ ] t3 call the plumber") }

        emit("\n-- the counter view calls the host action clearCompleted()")
        counter.send(line: "clear")
        try await counter.waitForLine("the action's answer", timeout: deadline) { $0.contains("the host cleared 1 done items") }
        try await list.waitForLine("t1 gone", timeout: deadline) { $0.contains("To-do (3):") }

        emit("\n-- at once: the list removes t2 and the editor retitles it; whichever the host orders first, every view ends without t2")
        mark = editor.lineCount
        list.send(line: "remove t2")
        editor.send(line: "title t2 too late")
        try await editor.waitForLine("t2 removed", after: mark, timeout: deadline) { $0.contains("Editing t2: removed") }
        try await list.waitForLine("t2 gone", timeout: deadline) { $0.contains("To-do (2):") }
        if let refusal = editor.output[mark...].last(where: { $0.contains("Error: ") }) {
            emit("  the host refused the late edit and the editor rolled it back: \(refusal.components(separatedBy: "Error: ").last ?? "")")
        } else {
            emit("  the host applied the edit before the removal")
        }

        emit("\n-- the counter is killed (SIGKILL); the launcher respawns it; the list adds an item meanwhile")
        counter.kill()
        // Once the kill returns, the killed counter's last lines are in: the lines after this
        // mark are the respawned counter's (the launcher restarts the same node).
        mark = counter.lineCount
        list.send(line: "add take out the bins")
        try await list.waitForLine("the new item", timeout: deadline) { $0.contains("[ ] list-2 take out the bins") }
        try await counter.waitForLine("the respawned counter", after: mark, timeout: deadline) { $0.contains("Open items: 3") }

        // The verdict: the host's list, and what each view shows of it.
        let truth = try await hostValues(control: "ipc://\(folder)/todo", object: "TodoList")
        let items: [(id: String, title: String, done: Bool)] =
            if case .list(let elements)? = truth["todos"] {
                elements.map { element in
                    (text(element[["id"]]), text(element[["title"]]), element[["done"]] == .bool(true))
                }
            } else { [] }
        let open = items.filter { !$0.done }.count
        let listLines = items.map { "  [\($0.done ? "x" : " ")] \($0.id) \($0.title)" }
        let listShown = Self.lastFrame(of: list, startingWith: "To-do (")
        let counterShown = counter.output.last { $0.contains("Open items:") }?.components(separatedBy: "] ").last ?? "?"
        emit("\nnode     | state")
        emit("---------+------------------------------")
        emit("host     | \(items.map { "\($0.id)\($0.done ? " (done)" : "")" }.joined(separator: ", ")); \(open) open")
        emit("list     | \(listShown.dropFirst().map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", "))")
        emit("counter  | \(counterShown)")
        stop()
        _ = try await run.value
        let expectedIDs = ["t3", "list-1", "list-2"]  // t1 cleared, t2 removed
        return items.map(\.id) == expectedIDs && Array(listShown.dropFirst()) == listLines && counterShown == "Open items: \(open)"
    }

    /// The lines of a view's last frame that starts with a line containing `header` (each
    /// without the node prefix).
    static func lastFrame(of process: NodeProcess, startingWith header: String) -> [String] {
        let lines = process.output.map { $0.components(separatedBy: "] ").dropFirst().joined(separator: "] ") }
        guard let start = lines.lastIndex(where: { $0.hasPrefix(header) }) else { return [] }
        var frame = [lines[start]]
        for line in lines[(start + 1)...] {
            guard line.hasPrefix("  [") else { break }
            frame.append(line)
        }
        return frame
    }
}
