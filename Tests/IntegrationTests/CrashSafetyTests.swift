import Foundation
import StateBus
import StateBusRuntime
import StateBusTesting
import Testing

@Suite("Persisted properties survive a host killed with SIGKILL")
struct CrashSafetyTests {
    @Test("every write a view saw acknowledged is in the restored state, and views converge on it")
    func killMidStorm() async throws {
        let folder = "/tmp/sbc-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let control = "ipc://\(folder)/control"
        let database = "\(folder)/counter.sqlite"
        let statebus = try BuiltProducts.executable("statebus")
        let host = try NodeProcess(
            executable: statebus,
            arguments: [
                "host", "--control", control, "--object", "Counter", "--property", "count:int~=0",
                "--database", database, "--heartbeat-ms", "200"
            ], name: "host")
        defer { host.terminate() }
        try await host.waitForLine("ready") { $0.hasPrefix("ready ") }
        let replica = try Replica(object: "Counter", controlEndpoint: control)
        defer { replica.close() }
        try await replica.waitUntilLive(timeout: .seconds(20))

        // The storm: writes 1, 2, 3… without waiting; acknowledgements are tracked in order.
        let acknowledged = Locked<Int64>(0)
        let (crossed, crossing) = AsyncStream<Void>.makeStream()
        let receipts = AsyncStream<(Int64, WriteReceipt)>.makeStream()
        let tracker = Task {
            for await (value, receipt) in receipts.stream {
                guard (try? await receipt.accepted()) != nil else { continue }
                acknowledged.withLock { $0 = max($0, value) }
                if value == 300 { crossing.finish() }
            }
        }
        let storm = Task {
            for value in Int64(1)...20_000 {
                if Task.isCancelled { break }
                receipts.continuation.yield((value, replica.write("count", to: .int(value))))
                if value % 50 == 0 { await Task.yield() }
            }
            receipts.continuation.finish()
        }
        for await _ in crossed {}
        host.kill()  // SIGKILL, mid-storm
        storm.cancel()

        // The file, read after the kill: it must hold at least every acknowledged value.
        let stored = try SQLitePropertyStore(path: database, readOnly: true).loadAll().first { $0.property == "count" }
        let highestAcknowledged = acknowledged.withLock { $0 }
        #expect(highestAcknowledged >= 300)
        guard case .int(let durable)? = stored?.value else {
            Issue.record("no stored count in \(database)")
            return
        }
        #expect(durable >= highestAcknowledged, "acknowledged \(highestAcknowledged) but only \(durable) is durable")

        // Restart: the host restores the value; the view resyncs (sending its unanswered
        // writes again) and converges with the host.
        try host.start()
        let ready = try await host.waitForLine("ready again") { $0.hasPrefix("ready ") }
        let epoch = try #require(ready.split(separator: "=").last.flatMap { UInt64($0) })
        try await replica.waitFor(timeout: .seconds(60), "the resync and the resent writes") {
            $0.epoch == epoch && $0.connectionState == .live && $0.pendingWriteCount == 0
        }
        tracker.cancel()
        let dump = try NodeProcess(executable: statebus, arguments: ["get", "--control", control, "--object", "Counter", "count"], name: "get")
        #expect(try await dump.exited() == 0)
        let hostValue = try #require(dump.output.last.flatMap { Int64($0) })
        #expect(hostValue >= durable)
        #expect(replica["count"] == .int(hostValue))
    }
}
