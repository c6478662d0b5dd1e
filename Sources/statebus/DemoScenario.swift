import Foundation
import StateBus
import StateBusCommandLine
import StateBusLaunch
import StateBusRuntime
import StateBusWire

/// The scripted scenario of `statebus demo`.
struct DemoScenario {
    let folder: String
    let deadline: Duration
    /// The interpreter of the shared-text app's Python view, or why there is none.
    var python: Result<PythonClient, PythonClient.Missing>? = nil

    /// Starts a topology under the launcher and returns it with a stop handle.
    /// The stop handle also stops every node at once, so no node outlives a failed step.
    func launch(_ yaml: String, name: String) throws -> (Launcher, Task<Int32, any Error>, @Sendable () -> Void) {
        let path = "\(folder)/\(name).yaml"
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        var file = try LaunchFile.load(path: path)
        // A host's first answer is a step like any other: it gets the demo's step wait.
        file.readyTimeout = deadline.inSeconds
        let launcher = Launcher(file: file, readiness: hostAnswers) { line in
            // Show renderings and the launcher's events; skip log noise.
            if !line.contains(" info statebus") { emit("  \(line)") }
        }
        let (stopped, stop) = AsyncStream<Void>.makeStream()
        let run = Task { try await launcher.run(until: { for await _ in stopped {} }) }
        return (
            launcher, run,
            {
                stop.finish()
                launcher.shutDown()
            }
        )
    }

    func node(_ launcher: Launcher, _ name: String) async throws -> NodeProcess {
        let clock = ContinuousClock()
        let end = clock.now + deadline
        while clock.now < end {
            if let process = launcher.process(named: name) { return process }
            await Task.yield()
        }
        throw LaunchError("node \(name) did not start within \(deadline)")
    }

    func step(_ text: String) { emit("\n-- \(text)") }

    /// What the host of `control` holds of `object`, read through a replica of the demo's own.
    func hostValues(control: String, object: String) async throws -> [String: Value] {
        let replica = try Replica(object: object, controlEndpoint: control, configuration: ReplicaConfiguration(nodeName: "demo-verdict"))
        defer { replica.close() }
        try await replica.waitUntilLive(timeout: deadline)
        return replica.values
    }

    /// The last rendered line of a view for `key` (`Email`: `Email: b@c.d`), without its prefix.
    private func shown(_ key: String, by process: NodeProcess) -> String? {
        process.output.last { $0.contains("] \(key): ") }?.components(separatedBy: "] ").last
    }

    /// A string value's text (`?` for anything else).
    func text(_ value: Value?) -> String {
        if case .string(let text)? = value { return text }
        return "?"
    }

    // MARK: Shared text

    func sharedText() async throws -> Bool {
        var topology = ["first", "second", "third"].map { DemoTopology.View(name: $0) }
        switch python {
        case .success(let client)?:
            emit("== 1. Shared text: a host, three Swift views and a Python view, each a process ==")
            topology.append(DemoTopology.View(name: "python", python: client.interpreter.path))
        case .failure(let missing)?:
            emit("== 1. Shared text: a host and three views, each a process ==")
            emit("(the Python view is left out: \(missing))")
        case nil:
            emit("== 1. Shared text: a host and three views, each a process ==")
        }
        let views = topology.map(\.name)
        let yaml = DemoTopology.sharedText(name: "text", folder: folder, views: topology, respawnViews: true)
        let (launcher, run, stop) = try launch(yaml, name: "text")
        defer { stop() }
        var processes: [NodeProcess] = []
        for view in views { processes.append(try await node(launcher, view)) }
        func everyone(shows text: String) async throws {
            for process in processes {
                try await process.waitForLine("\"\(text)\"", timeout: deadline) { $0.hasSuffix("view: \(text)") }
            }
        }
        try await everyone(shows: "Hello from the host")
        for (index, view) in views.enumerated() {
            step("the \(view) view edits the text")
            processes[index].send(line: "edited in \(view)")
            try await everyone(shows: "edited in \(view)")
        }
        step("the second view is killed (SIGKILL); the launcher respawns it; the first edits meanwhile")
        let second = processes[1]
        second.kill()
        processes[0].send(line: "edited while second was down")
        try await everyone(shows: "edited while second was down")

        let truth = text(try await hostValues(control: "ipc://\(folder)/text", object: "SharedData")["sharedText"])
        let finals = processes.map { $0.output.last { $0.contains(" view: ") }?.components(separatedBy: " view: ").last ?? "?" }
        emit("\nnode     | sharedText")
        emit("---------+------------------------------")
        emit("host     | \(truth)")
        for (view, text) in zip(views, finals) { emit("\(view.padding(toLength: 8, withPad: " ", startingAt: 0)) | \(text)") }
        stop()
        _ = try await run.value
        return finals.allSatisfy { $0 == truth } && truth == "edited while second was down"
    }

    // MARK: Profile

    func profile() async throws -> Bool {
        emit("\n== 2. Profile: host, profile view, editing view, notification toggle ==")
        let yaml = DemoTopology.profile(
            name: "profile", folder: folder,
            views: [
                .init(name: "profile", screen: "profile"), .init(name: "editor", screen: "edit"),
                .init(name: "notifications", screen: "notifications")
            ], respawnHost: true)
        let (launcher, run, stop) = try launch(yaml, name: "profile")
        defer { stop() }
        let host = try await node(launcher, "host")
        let profile = try await node(launcher, "profile")
        let editor = try await node(launcher, "editor")
        let toggle = try await node(launcher, "notifications")
        try await profile.waitForLine("the first render", timeout: deadline) { $0.contains("Username: anna") }
        try await editor.waitForLine("the first render", timeout: deadline) { $0.contains("Username field: anna") }
        try await toggle.waitForLine("the first render", timeout: deadline) { $0.contains("Notifications toggle: [ ]") }

        step("the editor changes $user.username and $user.email")
        editor.send(line: "username bea")
        editor.send(line: "email bea@example.org")
        try await profile.waitForLine("the edits", timeout: deadline) { $0.contains("Email: bea@example.org") }
        try await profile.waitForLine("the edits", timeout: deadline) { $0.contains("Username: bea") }

        step("the editor enters an invalid email: the host rejects it, the view rolls back and shows the error")
        var mark = editor.lineCount
        editor.send(line: "email bea-at-example")
        try await editor.waitForLine("the error view", after: mark, timeout: deadline) { $0.contains("Error: 'bea-at-example' is not a valid email") }
        try await editor.waitForLine("the rollback", after: mark, timeout: deadline) { $0.contains("Email field: bea@example.org") }
        mark = editor.lineCount
        editor.send(line: "dismiss")
        try await editor.waitForLine("the dismissed error", after: mark, timeout: deadline) { $0.contains("No errors") }

        step("the notification toggle is switched on (a persisted setting)")
        toggle.send(line: "toggle")
        try await profile.waitForLine("the setting", timeout: deadline) { $0.contains("Notifications: on") }

        step("the host is killed (SIGKILL) and respawned: views resync; the persisted setting is restored, the rest starts over")
        let marks = (profile: profile.lineCount, editor: editor.lineCount, toggle: toggle.lineCount)
        host.kill()
        try await host.waitForLine("the respawned host", timeout: deadline) { $0.hasPrefix("ready ") }

        // The verdict compares every view with what the restarted host actually holds.
        let truth = try await hostValues(control: "ipc://\(folder)/profile", object: "Profile")
        let username = text(truth["user"]?[["username"]])
        let email = text(truth["user"]?[["email"]])
        let notifications = truth["isNotificationEnabled"] == .bool(true)
        let expected: [(name: String, process: NodeProcess, mark: Int, line: String)] = [
            ("profile", profile, marks.profile, "Username: \(username)"),
            ("profile", profile, marks.profile, "Email: \(email)"),
            ("profile", profile, marks.profile, "Notifications: \(notifications ? "on" : "off")"),
            ("editor", editor, marks.editor, "Username field: \(username)"),
            ("editor", editor, marks.editor, "Email field: \(email)"),
            ("notifications", toggle, marks.toggle, "Notifications toggle: [\(notifications ? "x" : " ")]")
        ]
        // A view already showing the value (the toggle) does not render again; the others must.
        for entry in expected where shown(entry.line.key, by: entry.process) != entry.line {
            try await entry.process.waitForLine(entry.line, after: entry.mark, timeout: deadline) { $0.hasSuffix("] \(entry.line)") }
        }

        emit("\nnode          | state")
        emit("--------------+------------------------------")
        emit("host          | user = \(username), \(email); isNotificationEnabled = \(notifications)")
        var converged = true
        for entry in expected {
            let line = shown(entry.line.key, by: entry.process) ?? "?"
            converged = converged && line == entry.line
            emit("\(entry.name.padding(toLength: 13, withPad: " ", startingAt: 0)) | \(line)")
        }
        stop()
        _ = try await run.value
        // The persisted setting was switched on before the restart, and must have survived it.
        return converged && notifications && username == "anna"
    }
}

extension String {
    /// The key of a rendered line: `Email` of `Email: b@c.d`.
    fileprivate var key: String { String(prefix { $0 != ":" }) }
}
