import Foundation
import StateBus
import StateBusRuntime
import StateBusWire
import Testing
import ZeroMQ

@Suite("Writes from replicas: accepted, rejected, ordered, merged")
struct WriteTests {
    @Test("an accepted write reaches the host and every replica")
    func accepted() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        let writer = try await Fixtures.liveReplica("SharedData", of: host)
        let reader = try await Fixtures.liveReplica("SharedData", of: host)
        defer {
            writer.close()
            reader.close()
        }
        let receipt = writer.write("sharedText", to: "from a view")
        #expect(writer["sharedText"] == "from a view")  // optimistic: shown at once
        let sequence = try await receipt.accepted()
        #expect(host.value(of: "sharedText", in: "SharedData") == "from a view")
        #expect(sequence == host.sequence(of: "SharedData"))
        try await reader.waitFor(timeout: .seconds(20), "the other view to see the write") { $0["sharedText"] == "from a view" }
    }

    @Test("a rejected write rolls back and reaches the caller with the host's reason")
    func rejection() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        let replica = try await Fixtures.liveReplica("Profile", of: host)
        defer { replica.close() }
        let before = replica["user"]
        // (That the write shows at once is checked where it is deterministic: the model test,
        // whose rollback needs the main actor this test holds.)
        let receipt = replica.write("user", to: "not-an-email", at: ["email"])
        let error = await #expect(throws: StateBusError.self) { try await receipt.accepted() }
        #expect(error?.code == .validationFailed)
        #expect(error?.message.contains("needs an @") == true)
        #expect(error?.property == "user")
        #expect(replica["user"] == before)
        #expect(host.value(of: "user", in: "Profile") == before)
        #expect(replica.pendingWriteCount == 0)
    }

    @Test("read-only, unknown and wrongly typed writes are refused with their codes")
    func refusals() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        let replica = try await Fixtures.liveReplica("Profile", of: host)
        defer { replica.close() }
        let sequence = host.sequence(of: "Profile")
        let cases: [(PropertyChange, StateBusError.Code)] = [
            (PropertyChange("isLoading", to: true), .readOnly),
            (PropertyChange("nope", to: 1), .unknownProperty),
            (PropertyChange("notificationsEnabled", to: "yes"), .typeMismatch),
            (PropertyChange("user", at: ["nickname", "first"], to: "x"), .invalidPath),
            (PropertyChange("notificationsEnabled", to: false, expectedVersion: 99), .versionConflict)
        ]
        for (change, code) in cases {
            let error = await #expect(throws: StateBusError.self) { try await replica.write([change]).accepted() }
            #expect(error?.code == code, "\(change)")
        }
        #expect(host.sequence(of: "Profile") == sequence)
        #expect(replica.values == host.values(of: "Profile"))
    }

    @Test("compare-and-set applies when the version matches")
    func compareAndSet() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        let replica = try await Fixtures.liveReplica("SharedData", of: host)
        defer { replica.close() }
        let version = replica.version(of: "counter") ?? 0
        _ = try await replica.write("counter", to: 1, expectedVersion: version).accepted()
        await #expect(throws: StateBusError.self) { try await replica.write("counter", to: 2, expectedVersion: version).accepted() }
        #expect(host.value(of: "counter", in: "SharedData") == 1)
    }

    @Test("a burst of 1,000 writes never shows an older value after a newer one")
    func burstIsMonotonic() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        let replica = try await Fixtures.liveReplica("SharedData", of: host)
        defer { replica.close() }
        let seen = Locked<[Int64]>([])
        let observer = Task {
            for await _ in replica.changes {
                // Read and recorded under one lock, on both sides: read outside it, a value read
                // here could be recorded after a newer one the writer read later.
                seen.withLock { if case .int(let value) = replica["counter"] ?? .null { $0.append(value) } }
                if replica["counter"] == 1000 && replica.pendingWriteCount == 0 { return }
            }
        }
        var last: WriteReceipt?
        for value in 1...1000 {
            last = replica.write("counter", to: .int(Int64(value)))
            seen.withLock { if case .int(let shown) = replica["counter"] ?? .null { $0.append(shown) } }
        }
        _ = try await last?.accepted()
        try await replica.waitFor(timeout: .seconds(20), "every echo") { $0.pendingWriteCount == 0 }
        observer.cancel()
        let values = seen.withLock { $0 }
        #expect(!values.isEmpty)
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 }, "values went backwards: \(values.prefix(50))")
        #expect(replica["counter"] == 1000)
        #expect(host.value(of: "counter", in: "SharedData") == 1000)
    }

    @Test("two views writing different fields of one struct both keep their edit")
    func siblingFields() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        let first = try await Fixtures.liveReplica("Profile", of: host)
        let second = try await Fixtures.liveReplica("Profile", of: host)
        defer {
            first.close()
            second.close()
        }
        let a = first.write("user", to: "bea", at: ["username"])
        let b = second.write("user", to: "bea@example.org", at: ["email"])
        _ = try await (a.accepted(), b.accepted())
        let expected = try ValueEncoder().encode(User(username: "bea", email: "bea@example.org"))
        #expect(host.value(of: "user", in: "Profile") == expected)
        for replica in [first, second] {
            try await replica.waitFor(timeout: .seconds(20), "both edits") { $0["user"] == expected }
        }
    }

    @Test("a multi-property write applies as one batch")
    func batchWrite() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        let replica = try await Fixtures.liveReplica("SharedData", of: host)
        defer { replica.close() }
        let before = host.sequence(of: "SharedData") ?? 0
        let sequence = try await replica.write([PropertyChange("sharedText", to: "both"), PropertyChange("counter", to: 7)]).accepted()
        #expect(sequence == before + 1)
        #expect(host.value(of: "counter", in: "SharedData") == 7)
        #expect(host.value(of: "sharedText", in: "SharedData") == "both")
    }

    @Test("writes made before the replica is connected are kept and sent once it joins")
    func writesBeforeJoin() async throws {
        let folder = Fixtures.temporaryFolder()
        let replica = try Replica(object: "SharedData", controlEndpoint: "ipc://\(folder)/control")
        defer { replica.close() }
        let receipt = replica.write("sharedText", to: "early bird")
        let host = try await Fixtures.host(folder: folder)
        defer { host.stop() }
        _ = try await receipt.accepted()
        #expect(host.value(of: "sharedText", in: "SharedData") == "early bird")
    }
}

@Suite("A write sent again is answered again, not applied twice")
struct DuplicateWriteTests {
    static func write(id: UInt64, count: Int64) -> Statebus_V1_Request {
        var write = Statebus_V1_WriteRequest()
        write.object = "SharedData"
        write.writeID = id
        write.viewID = "resending-view"
        var change = Statebus_V1_Change()
        change.property = "counter"
        change.value = Value.int(count).wire
        write.changes = [change]
        return RawClient.request(id: id, .write(write))
    }

    @Test("a copy gets the first answer and changes nothing, though another write came between")
    func copyIsAnsweredNotApplied() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        let context = try Context()
        defer { context.terminate() }
        let client = try RawClient(context: context, endpoint: host.controlEndpoint)
        defer { client.socket.close() }
        try client.hello(as: "resending-view")

        try client.send(Self.write(id: 1, count: 1))
        let firstReply = try client.reply()
        let first = try #require(firstReply).writeReply
        #expect(first.accepted && first.sequence == 1)
        // Another writer's change, acknowledged after the first write.
        try host.update("counter", to: 2, in: "SharedData")

        // The view reconnects and sends write 1 again: its answer was lost, say.
        try client.send(Self.write(id: 1, count: 1))
        let againReply = try client.reply()
        let again = try #require(againReply).writeReply
        #expect(again.accepted && again.sequence == 1, "the first answer, again")
        #expect(host.value(of: "counter", in: "SharedData") == 2, "the later write stands")
        #expect(host.sequence(of: "SharedData") == 2)
        #expect(host.statistics.duplicateWrites == 1)

        // The same id with other changes is not a copy (a restarted view reusing its id).
        try client.send(Self.write(id: 1, count: 7))
        let otherReply = try client.reply()
        let other = try #require(otherReply).writeReply
        #expect(other.accepted && other.sequence == 3)
        #expect(host.value(of: "counter", in: "SharedData") == 7)
    }
}
