import Foundation
import StateBusLaunch
import StateBusRuntime
import StateBusTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("statebus launch")
struct LaunchTests {
    let folder = "/tmp/sbl-\(UUID().uuidString.prefix(8))"

    init() throws { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }

    func write(_ yaml: String) throws -> String {
        let path = "\(folder)/launch.yaml"
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func launch(_ path: String) throws -> NodeProcess {
        try NodeProcess(executable: try BuiltProducts.executable("statebus"), arguments: ["launch", path], name: "launch")
    }

    /// The pid the launcher reported for a node's latest start.
    static func pid(of node: String, in output: [String]) -> Int32? {
        output.last { $0.hasPrefix("launch: started \(node) (") }
            .flatMap { $0.split(separator: " ").last.map { $0.dropLast() } }
            .flatMap { Int32($0) }
    }

    /// Whether process `pid` still runs. A zombie does not: a launcher that exits right after
    /// its nodes ended leaves them for init to collect, and `kill(pid, 0)` still finds them.
    static func isAlive(_ pid: Int32) -> Bool { NodeProcess.isRunning(pid: pid) }

    var topology: String {
        """
        name: test
        nodes:
          - name: host
            role: host
            objects: [Counter]
            control: ipc://\(folder)/control
            executable: statebus
            arguments: [host, --object, Counter, --property, "count:int=0"]
          - name: watcher
            role: view
            objects: [Counter]
            executable: statebus
            arguments: [watch, --json]
            respawn: { policy: on-failure, delay: 0.1, max: 2 }
        """
    }

    @Test("views start after their host answers; environment is injected; SIGTERM leaves no process behind")
    func readinessAndShutdown() async throws {
        let launcher = try launch(try write(topology))
        defer { launcher.terminate() }
        try await launcher.waitForLine("the view's first state") { $0.hasPrefix("watcher | ") && $0.contains(#""connection":"live""#) }
        let output = launcher.output
        let answered = try #require(output.firstIndex { $0.contains("launch: host answers on ipc://\(folder)/control") })
        let viewStarted = try #require(output.firstIndex { $0.hasPrefix("launch: started watcher") })
        #expect(answered < viewStarted, "the view started before its host answered")
        let pids = try ["host", "watcher"].map { try #require(Self.pid(of: $0, in: output)) }
        #expect(pids.allSatisfy(Self.isAlive))
        #expect(launcher.terminate(grace: .seconds(90)) == 0)
        for pid in pids { #expect(!Self.isAlive(pid), "node pid \(pid) outlived the launcher") }
    }

    @Test("the injected readiness check decides: a host it refuses stops the launch before any view starts")
    func injectedReadiness() async throws {
        let file = try LaunchFile.load(path: try write(topology))
        let asked = Recorder()
        let printed = Recorder()
        let launcher = Launcher(
            file: file, statebus: try BuiltProducts.executable("statebus"),
            readiness: { endpoint, timeout in
                asked.append("\(endpoint) within \(timeout)")
                throw CancellationError()
            }, output: { printed.append($0) })
        let error = await #expect(throws: LaunchError.self) { try await launcher.run(until: {}) }
        // The file gives no ready_timeout: the default, STATEBUS_TIMEOUT's when it is set.
        let wait = Duration.milliseconds(Int(LaunchFile.defaultReadyTimeout * 1000))
        #expect(asked.lines == ["ipc://\(folder)/control within \(wait)"])
        #expect(error?.description.contains("host 'host' did not answer on ipc://\(folder)/control") == true)
        #expect(!printed.lines.contains { $0.hasPrefix("launch: started watcher") })
        #expect(launcher.process(named: "host")?.isRunning == false, "the launcher left its host running")
    }

    @Test("a killed view is respawned and catches up")
    func respawn() async throws {
        let launcher = try launch(try write(topology))
        defer { launcher.terminate() }
        try await launcher.waitForLine("the view live") { $0.hasPrefix("watcher | ") && $0.contains(#""connection":"live""#) }
        let first = try #require(Self.pid(of: "watcher", in: launcher.output))
        kill(first, SIGKILL)
        try await launcher.waitForLine("the restart") { $0.contains("launch: watcher exited with status 137; restarting (1 of 2)") }
        try await launcher.waitForLine("the new watcher") { $0.hasPrefix("launch: started watcher") && !$0.contains("pid \(first))") }
        let second = try #require(Self.pid(of: "watcher", in: launcher.output))
        #expect(second != first)
        #expect(Self.isAlive(second))
    }

    @Test("a node that fails makes the launcher fail")
    func failureExitCode() async throws {
        let path = try write(
            """
            name: failing
            nodes:
              - name: host
                role: host
                control: ipc://\(folder)/control
                executable: statebus
                arguments: [host, --object, Counter, --property, "count:int=0"]
              - name: broken
                role: view
                executable: false
            """)
        let launcher = try launch(path)
        defer { launcher.terminate() }
        try await launcher.waitForLine("the failure") { $0.contains("launch: broken exited with status 1") }
        let host = try #require(Self.pid(of: "host", in: launcher.output))
        launcher.signal(SIGTERM)
        #expect(try await launcher.exited() == 1)
        #expect(launcher.output.contains("launch: broken failed with exit status 1"))
        #expect(!Self.isAlive(host))
    }

    @Test(
        "malformed launch files are refused with file, line and field, before anything starts",
        arguments: [
            ("name: x\nnodes: []\n", ":2: nodes: expected a non-empty list of nodes"),
            ("nodes:\n  - name: a\n    role: boss\n    executable: x\n", ":3: nodes[0].role: expected host, relay or view"),
            ("nodes:\n  - name: a\n    role: host\n    executable: x\n    colour: red\n", ":5: nodes[0].colour: unknown field"),
            (
                "nodes:\n  - name: a\n    role: host\n    executable: x\n  - name: a\n    role: host\n    executable: x\n",
                ":5: nodes[1].name: the name 'a' is used twice"
            ),
            (
                "nodes:\n  - name: a\n    role: host\n    executable: x\n  - name: b\n    role: host\n    executable: x\n  - name: v\n    role: view\n    executable: x\n",
                "nodes[2].host: say which host or relay this view joins"
            ),
            (
                "nodes:\n  - name: a\n    role: host\n    executable: x\n  - name: v\n    role: view\n    host: a\n    control: ipc:///tmp/x\n    executable: x\n",
                "nodes[1].control: give either host:"
            ),
            (
                "nodes:\n  - name: r\n    role: relay\n    host: s\n    executable: x\n  - name: s\n    role: relay\n    upstream: ipc:///tmp/h\n    executable: x\n",
                "nodes[0].host: no host or relay named 's' before this relay"
            ),
            ("nodes:\n  - name: h\n    role: host\n    upstream: ipc:///tmp/h\n    executable: x\n", "nodes[0].upstream: a host has no upstream"),
            (
                "nodes:\n  - name: a\n    role: host\n    executable: x\n    respawn: { policy: sometimes }\n",
                ":5: nodes[0].respawn.policy: expected never, on-failure or always"
            ),
            ("nodes: [\n", "not valid YAML")
        ])
    func malformed(yaml: String, expected: String) throws {
        let error = try #require(throws: LaunchFileError.self) { try LaunchFile.parse(yaml, path: "bad.yaml") }
        #expect(error.description.contains(expected), "got: \(error)")
        #expect(error.description.hasPrefix("bad.yaml"))
    }

    @Test("the CLI refuses a missing executable with exit status 1 and starts nothing")
    func cliRefusal() async throws {
        let path = try write("nodes:\n  - name: a\n    role: host\n    executable: /nonexistent/thing\n")
        let launcher = try launch(path)
        defer { launcher.terminate() }
        #expect(try await launcher.exited() == 1)
        #expect(launcher.output.contains { $0.contains("executable '/nonexistent/thing' not found") && $0.contains("launch.yaml:2") })
        #expect(!launcher.output.contains { $0.hasPrefix("launch: started") })
    }

    @Test("the demo's launch files are valid")
    func deployFiles() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        for name in ["shared-text.yaml", "profile.yaml"] {
            let file = try LaunchFile.load(path: root.appendingPathComponent("deploy/\(name)").path)
            #expect(file.nodes.contains { $0.role == .host })
        }
    }
}

/// Lines collected from `@Sendable` callbacks.
private final class Recorder: Sendable {
    private let recorded = Locked<[String]>([])
    var lines: [String] { recorded.withLock { $0 } }
    func append(_ line: String) { recorded.withLock { $0.append(line) } }
}
