import Foundation
import StateBusLaunch
import StateBusTesting
import Testing

/// Regression test for the libzmq 4.3.4 stream-engine abort (issue 12, item 2):
/// `Assertion failed: !_io_error (stream_engine_base.cpp:331)` (libzmq issues 4364, 4841,
/// 3937) killed hosts when a client with ZMTP heartbeats flooded writes and died. StateBus
/// sets no ZMTP heartbeat option on any socket; this test makes sure a host survives both
/// kinds of client being killed mid-flood, cycle after cycle.
///
/// The clients are processes, killed with SIGKILL, so that their connections die as a
/// crashed peer's do (no close, no goodbye): `statebus-flood`, a test helper built with the
/// package (a raw DEALER sending well-formed writes, with ZMTP heartbeats on request; see
/// `Tests/Helpers/statebus-flood`), and every third cycle a real view, `statebus watch
/// --edits`, fed a burst of edits.
@Suite("libzmq abort regression: a host survives flooding clients killed with SIGKILL")
struct FloodKillTests {
    @Test("30 cycles of clients killed mid-flood, with and without ZMTP heartbeats: the host answers, keeps its state, exits only when told")
    func floodKillCycles() async throws {
        let folder = "/tmp/sbf-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let control = "ipc://\(folder)/control"
        let statebus = try BuiltProducts.executable("statebus")
        let flood = try BuiltProducts.executable("statebus-flood")
        // An abort ends the host at once, as SIGABRT (134), with no backtracer holding its output open.
        let host = try NodeProcess(
            executable: statebus,
            arguments: [
                "host", "--control", control, "--object", "Counter", "--property", "count:int=0",
                "--property", "label:string!=intact", "--no-persistence"
            ], environment: ["SWIFT_BACKTRACE": "enable=no"], name: "host")
        defer { host.terminate() }
        try await host.waitForLine("ready") { $0.hasPrefix("ready ") }

        // At least 10 cycles, however slow the machine (9 fit in 60 s early in a full run on
        // two cores); then up to 30 while 60 s last.
        let deadline = ContinuousClock.now + .seconds(60)
        var cycles = 0
        var kills = (heartbeats: 0, plain: 0, views: 0)
        for cycle in 1...30 where (cycle <= 10 || ContinuousClock.now < deadline) && host.isRunning {
            let clients = try [["--zmtp-heartbeats"], []].map { extra in
                try NodeProcess(executable: flood, arguments: [control, "Counter", "count"] + extra, name: "flood\(extra.isEmpty ? "" : "-hb")")
            }
            var view: NodeProcess?
            defer {
                for client in clients { client.terminate(grace: .seconds(1)) }
                view?.terminate(grace: .seconds(1))
            }
            if cycle % 3 == 0 {
                let edits = try NodeProcess(
                    executable: statebus,
                    arguments: [
                        "watch", "--json", "--edits", "--control", control, "--object", "Counter"
                    ], name: "view")
                view = edits
                try await edits.waitForLine("the view live") { $0.contains(#""connection":"live""#) }
                for value in 1...2_000 { edits.send(line: "count \(value)") }
                try await edits.waitForLine("a first answer") { $0.contains(#""event":"write""#) }
            }
            for client in clients {
                try await client.waitForLine("\(client.name) flooding", timeout: .seconds(20)) { $0.hasPrefix("flooding") }
            }
            for client in clients { client.kill() }
            kills.heartbeats += 1
            kills.plain += 1
            if let view {
                view.kill()
                kills.views += 1
            }
            cycles = cycle
        }

        let survived = host.isRunning
        print(
            "flood-kill: \(cycles) cycles, \(kills.heartbeats + kills.plain + kills.views) clients killed mid-flood "
                + "(\(kills.heartbeats) with ZMTP heartbeats, \(kills.plain) without, \(kills.views) statebus views); "
                + "host survived: \(survived ? "yes" : "no")")
        #expect(survived, "the host died during the cycles; its last lines:\n\(host.output.suffix(10).joined(separator: "\n"))")
        #expect(cycles >= 10, "only \(cycles) cycles ran within the time bound")
        try #require(survived)

        // Still answers, state intact: the read-only label untouched, the count an integer.
        let label = try await run(statebus, ["get", "--control", control, "--object", "Counter", "label", "--json"])
        let count = try await run(statebus, ["get", "--control", control, "--object", "Counter", "count", "--json"])
        #expect(label == #""intact""#)
        #expect(Int(count) != nil, "count is \(count)")
        #expect(host.isRunning, "the host ended without being told")
        #expect(host.terminate(grace: .seconds(20)) == 0, "the host did not stop cleanly on SIGTERM")
    }

    /// Runs a short `statebus` command and returns its last line.
    func run(_ executable: URL, _ arguments: [String]) async throws -> String {
        let process = try NodeProcess(executable: executable, arguments: arguments, name: arguments.first)
        defer { process.terminate() }
        let status = try await process.exited(timeout: .seconds(20))
        #expect(status == 0, "\(arguments.joined(separator: " ")) exited \(status): \(process.output.suffix(5))")
        return process.output.last ?? ""
    }
}
