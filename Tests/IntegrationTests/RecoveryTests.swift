import Foundation
import StateBusLaunch
import StateBusTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Recovery is automatic (issue 12, item 2): a host in a launch file restarts on failure
/// without being told to, and a launcher whose host is gone for good ends the set with a
/// failure, so that a supervisor restarts it.
@Suite("Recovery: hosts respawn by default; a host dead for good stops the set")
struct RecoveryTests {
    let folder = "/tmp/sbr-\(UUID().uuidString.prefix(8))"

    init() throws { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }

    /// A host and a `watch --json` view; `hostRespawn` is the host's respawn line, if any.
    func topology(hostRespawn: String?) throws -> String {
        let path = "\(folder)/launch.yaml"
        try """
        name: recovery
        nodes:
          - name: host
            role: host
            objects: [Counter]
            control: ipc://\(folder)/control
            executable: statebus
            arguments: [host, --object, Counter, --property, "count:int=0", --no-persistence, --heartbeat-ms, "200"]
        \(hostRespawn.map { "    respawn: \($0)\n" } ?? "")  - name: watcher
            role: view
            objects: [Counter]
            executable: statebus
            arguments: [watch, --json]
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func launch(_ path: String) throws -> NodeProcess {
        try NodeProcess(executable: try BuiltProducts.executable("statebus"), arguments: ["launch", path], name: "launch")
    }

    /// The epoch of a `watch --json` line that shows the view live, if it is one.
    static func liveEpoch(_ line: String) -> String? {
        guard line.hasPrefix("watcher | "), line.contains(#""connection":"live""#),
            let range = line.range(of: #""epoch":"#)
        else { return nil }
        return String(line[range.upperBound...].prefix { $0.isNumber })
    }

    @Test("a file that says nothing: hosts respawn on failure, views do not; a partial mapping keeps the host's policy")
    func defaults() throws {
        let file = try LaunchFile.parse(
            """
            nodes:
              - { name: host, role: host, executable: statebus }
              - { name: view, role: view, host: host, executable: statebus }
              - { name: patient, role: host, executable: statebus, respawn: { max: 9 } }
              - { name: pinned, role: host, executable: statebus, respawn: never }
              - { name: busy, role: view, host: host, executable: statebus, respawn: { delay: 2 } }
            """)
        let policies = Dictionary(uniqueKeysWithValues: file.nodes.map { ($0.name, $0.respawn) })
        #expect(policies["host"] == LaunchFile.Respawn(policy: .onFailure, delay: 0.5, maximum: 5))
        #expect(policies["view"]?.policy == .never)
        #expect(policies["patient"] == LaunchFile.Respawn(policy: .onFailure, delay: 0.5, maximum: 9))
        #expect(policies["pinned"]?.policy == .never)
        #expect(policies["busy"] == LaunchFile.Respawn(policy: .never, delay: 2, maximum: 5))
    }

    @Test("a host killed with SIGKILL under a default launch file comes back, and its view converges on the new epoch")
    func hostComesBack() async throws {
        let launcher = try launch(try topology(hostRespawn: nil))
        defer { launcher.terminate() }
        let first = try await launcher.waitForLine("the view live") { Self.liveEpoch($0) != nil }
        let firstEpoch = try #require(Self.liveEpoch(first))
        let firstHost = try #require(LaunchTests.pid(of: "host", in: launcher.output))

        let mark = launcher.lineCount
        kill(firstHost, SIGKILL)
        try await launcher.waitForLine("the host's restart", after: mark) { $0.contains("launch: host exited with status 137; restarting (1 of 5)") }
        let again = try await launcher.waitForLine("the view live on a new epoch", after: mark, timeout: .seconds(30)) {
            Self.liveEpoch($0).map { $0 != firstEpoch } ?? false
        }
        let secondHost = try #require(LaunchTests.pid(of: "host", in: launcher.output))
        #expect(secondHost != firstHost && LaunchTests.isAlive(secondHost))
        #expect(launcher.isRunning, "the launcher ended although its host came back")
        print("recovery: host pid \(firstHost) killed, respawned as pid \(secondHost); view epoch \(firstEpoch) -> \(Self.liveEpoch(again) ?? "?")")
    }

    @Test("a host that fails for good stops the set: the launcher says which host and why, and exits 1 within 20 s")
    func hostDeadForGood() async throws {
        let launcher = try launch(try topology(hostRespawn: "{ policy: on-failure, delay: 0.1, max: 1 }"))
        defer { launcher.terminate() }
        try await launcher.waitForLine("the view live") { Self.liveEpoch($0) != nil }
        let view = try #require(LaunchTests.pid(of: "watcher", in: launcher.output))
        let firstHost = try #require(LaunchTests.pid(of: "host", in: launcher.output))

        kill(firstHost, SIGKILL)
        try await launcher.waitForLine("the one restart allowed") { $0.contains("launch: host exited with status 137; restarting (1 of 1)") }
        try await launcher.waitForLine("the restarted host") { $0.hasPrefix("launch: started host") && !$0.contains("pid \(firstHost))") }
        let secondHost = try #require(LaunchTests.pid(of: "host", in: launcher.output))
        let killed = ContinuousClock.now
        kill(secondHost, SIGKILL)

        let status = try await launcher.exited(timeout: .seconds(20))
        let took = ContinuousClock.now - killed
        let verdict = launcher.output.first { $0.contains("launch: host 'host' died for good") }
        #expect(status == 1, "the launcher exited \(status) after its host died for good")
        #expect(
            verdict?.contains("exit status 137 (signal 9)") == true && verdict?.contains("gave up after 1 restarts") == true,
            "no line says which host died and why: \(launcher.output.suffix(8))")
        #expect(!LaunchTests.isAlive(view), "the view outlived its launcher")
        print(
            "recovery: host killed twice (max 1 restart); launcher exited \(status) \(String(format: "%.1f s", Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18)) after the second kill: \(verdict ?? "no verdict")"
        )
    }
}
