import Foundation
import StateBusCommandLine
import StateBusEtcd
import StateBusLaunch

/// The high-availability app: the shared text served by a group of two hosts on etcd.
extension DemoScenario {
    func highAvailability() async throws -> Bool {
        emit("\n== 4. High availability: etcd, two hosts of one group, three views that follow the leader ==")
        guard LocalEtcd.executable != nil else {
            emit("  skipped: etcd is not installed (deploy/setup.sh --etcd installs Debian's etcd-server)")
            return true
        }
        let started = ContinuousClock.now
        let etcd = try await LocalEtcd.start(in: folder, timeout: deadline, isHealthy: EtcdClient.isHealthy)
        defer { etcd.process.terminate(grace: .seconds(1)) }
        emit("  etcd: one member at \(etcd.endpoint) (pid \(etcd.process.pid))")
        let views = ["first", "second", "third"]
        let yaml = DemoTopology.highAvailability(name: "ha", folder: folder, etcd: etcd.endpoint, views: views)
        let (launcher, run, stop) = try launch(yaml, name: "ha")
        defer { stop() }
        let hosts = [try await node(launcher, "host-a"), try await node(launcher, "host-b")]
        var processes: [NodeProcess] = []
        for view in views { processes.append(try await node(launcher, view)) }
        func everyone(shows text: String) async throws {
            for process in processes {
                try await process.waitForLine("\"\(text)\"", timeout: deadline) { $0.hasSuffix("view: \(text)") }
            }
        }
        /// The host that says it leads, waiting for one.
        func leader(after marks: [Int] = [0, 0]) async throws -> Int {
            let end = ContinuousClock.now + deadline
            while ContinuousClock.now < end {
                for (index, host) in hosts.enumerated()
                where host.output.dropFirst(marks[index]).last(where: { $0.hasPrefix("role ") })?
                    .hasPrefix("role leader") == true
                {
                    return index
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            throw LaunchError("no host of the group led within \(deadline)")
        }
        var terms: [(host: String, from: Duration)] = []
        let names = ["host-a", "host-b"]
        let first = try await leader()
        terms.append((names[first], ContinuousClock.now - started))
        try await everyone(shows: "Hello from the group")
        step("the first view edits the text; the leader (\(names[first])) takes it, every view shows it")
        processes[0].send(line: "written to \(names[first])")
        try await everyone(shows: "written to \(names[first])")

        step("the leader, \(names[first]), is killed (SIGKILL): the group elects a leader again, and the views follow it")
        let marks = hosts.map(\.lineCount)
        let killed = ContinuousClock.now
        hosts[first].kill()
        let second = try await leader(after: marks)
        terms.append((names[second], ContinuousClock.now - started))
        emit("  \(names[second]) leads \(formatted(ContinuousClock.now - killed)) after the kill")
        try await everyone(shows: "written to \(names[first])")
        processes[1].send(line: "written after the kill to \(names[second])")
        try await everyone(shows: "written after the kill to \(names[second])")
        let standby = 1 - second
        step("the launcher has respawned \(names[first]); \(names[standby]) stands by behind \(names[second])")
        let leaderControl = "ipc://\(folder)/ha-\(names[second])"
        let end = ContinuousClock.now + deadline
        while hosts[standby].output.last(where: { $0.hasPrefix("role ") }) != "role standby leader=\(leaderControl)" {
            guard ContinuousClock.now < end else {
                throw LaunchError("\(names[standby]) did not stand by behind \(names[second]) within \(deadline)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        processes[2].send(line: "the group survived a kill")
        try await everyone(shows: "the group survived a kill")

        let finals = processes.map { $0.output.last { $0.contains(" view: ") }?.components(separatedBy: " view: ").last ?? "?" }
        emit("\nwho led when (seconds since the demo began)")
        emit("host    | from")
        emit("--------+------")
        for term in terms { emit("\(term.host.padding(toLength: 7, withPad: " ", startingAt: 0)) | \(formatted(term.from))") }
        emit("\nnode    | sharedText")
        emit("--------+------------------------------")
        for (view, text) in zip(views, finals) { emit("\(view.padding(toLength: 7, withPad: " ", startingAt: 0)) | \(text)") }
        stop()
        _ = try await run.value
        return finals.allSatisfy { $0 == "the group survived a kill" }
    }

    private func formatted(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return String(format: "%.2f s", Double(seconds) + Double(attoseconds) / 1e18)
    }
}
