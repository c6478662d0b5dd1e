import Foundation
import StateBusLaunch
import StateBusTesting
import Testing

/// libzmq 4.3.4's stream-engine abort (`!_io_error`, stream_engine_base.cpp:331), met head
/// on: the hostile client that triggers it, against many hosts at once.
///
/// The trigger (Deployment.md, "libzmq 4.3.4: ZMTP heartbeats and the stream-engine abort")
/// needs a connection whose reading libzmq stopped because its receive queue was full, a
/// ZMTP PING among the bytes it had read, and a reset from the peer. The client here does
/// everything to get there: ZMTP heartbeats every 10 ms, writes as fast as the socket
/// takes them, replies never read, SIGKILL mid-flood. Hosts have no receive limit, so
/// libzmq never stops reading.
///
/// A suite of its own, run by the test command after every other test (`deploy/test.sh`):
/// ten flooding clients at once keep both cores busy for a minute, which would only make
/// the rest of the suite slower, and the rest would make this test's load uneven.
@Suite("Hostile clients: no peer can abort a host")
struct HostileClientTests {
    @Test(
        "hostile clients (hello, ZMTP heartbeats every 10 ms, writes never read, SIGKILL after 1.5 s): 30 kills on each of 10 hosts, tcp and ipc, abort none"
    )
    func hostileClientsAbortNoHost() async throws {
        let folder = "/tmp/sbh-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let statebus = try BuiltProducts.executable("statebus")
        let flood = try BuiltProducts.executable("statebus-flood")
        // Five hosts on tcp loopback (key-less: the worst case, allowed only with --insecure)
        // and five on ipc, all at once; each meets 30 hostile clients in turn.
        let outcomes = try await withThrowingTaskGroup(of: (String, Int, Bool, String).self) { group in
            for index in 0..<10 {
                group.addTask {
                    let onTCP = index < 5
                    let bind = onTCP ? "tcp://127.0.0.1:*" : "ipc://\(folder)/host\(index)"
                    // An abort ends the host at once, as SIGABRT (134), with no backtracer holding its output open.
                    let host = try NodeProcess(
                        executable: statebus,
                        arguments: [
                            "host", "--name", "hostile\(index)", "--control", bind, "--object", "Counter", "--property", "count:int=0",
                            "--property", "label:string!=intact", "--no-persistence"
                        ] + (onTCP ? ["--insecure"] : []), environment: ["SWIFT_BACKTRACE": "enable=no"], name: "host\(index)")
                    defer { host.terminate() }
                    let ready = try await host.waitForLine("ready", timeout: .seconds(60)) { $0.hasPrefix("ready ") }
                    let control = try #require(
                        ready.split(separator: " ").first { $0.hasPrefix("control=") }.map { String($0.dropFirst("control=".count)) })
                    var kills = 0
                    for _ in 1...30 where host.isRunning {
                        let client = try NodeProcess(executable: flood, arguments: [control, "Counter", "count", "--unread"], name: "hostile")
                        defer { client.terminate(grace: .seconds(1)) }
                        try await client.waitForLine("the hostile client flooding", timeout: .seconds(60)) { $0.hasPrefix("flooding") }
                        // Deliberate: the flood's length is the scenario, not a wait for an event.
                        try await Task.sleep(for: .milliseconds(1_500))
                        client.kill()
                        kills += 1
                    }
                    let survived = host.isRunning
                    var state = ""
                    if survived {
                        let label = try await OneShotCommand.run(
                            statebus, ["get", "--control", control, "--object", "Counter", "label", "--json"], timeout: .seconds(120))
                        state = label.output.last ?? ""
                    }
                    return (
                        bind.hasPrefix("tcp") ? "tcp host \(index)" : "ipc host \(index)", kills, survived,
                        state + " " + host.output.suffix(3).joined(separator: " | ")
                    )
                }
            }
            var all: [(String, Int, Bool, String)] = []
            for try await outcome in group { all.append(outcome) }
            return all
        }
        let aborted = outcomes.filter { !$0.2 }
        print("hostile clients: \(outcomes.map(\.1).reduce(0, +)) killed on \(outcomes.count) hosts; \(aborted.count) hosts died")
        #expect(aborted.isEmpty, "hosts died: \(aborted.map { "\($0.0) after \($0.1) kills: \($0.3)" })")
        for outcome in outcomes where outcome.2 {
            #expect(outcome.1 == 30, "\(outcome.0): \(outcome.1) kills")
            #expect(outcome.3.hasPrefix(#""intact""#), "\(outcome.0) answers with its state intact: \(outcome.3)")
        }
    }

}
