import Foundation
import StateBus
import StateBusWire
import Testing
import ZeroMQ

/// A view's writes are applied in the order it made them, also when ZeroMQ reconnects its
/// socket underneath it to a restarted host.
@Suite("Writes keep their order across a reconnect underneath the view")
struct WriteOrderTests {
    static func write(_ value: Int64, id: UInt64) -> Statebus_V1_Request {
        var write = Statebus_V1_WriteRequest()
        write.object = "SharedData"
        write.writeID = id
        write.viewID = "raw"
        var change = Statebus_V1_Change()
        change.property = "counter"
        change.value = Value.int(value).wire
        write.changes = [change]
        return RawClient.request(id: 100 + id, .write(write))
    }

    @Test("a write that reaches a restarted host on the old connection is refused NOT_JOINED and not applied; after a hello it is")
    func writeOnReconnectedSocket() async throws {
        let folder = Fixtures.temporaryFolder()
        let context = try Context()
        defer { context.terminate() }
        let first = try await Fixtures.host(folder: folder)
        let client = try RawClient(context: context, endpoint: first.controlEndpoint)
        defer { client.socket.close() }
        try client.hello()
        let accepted = try #require(
            try {
                try client.send(Self.write(1, id: 1))
                return try client.reply()
            }()
        ).writeReply
        #expect(accepted.accepted)
        first.stop()

        // The same socket: ZeroMQ reconnects it to the next host at the same endpoint and
        // sends what was queued meanwhile.
        let second = try await Fixtures.host(folder: folder)
        defer { second.stop() }
        let expected: Value = .int(0)
        try client.send(Self.write(2, id: 2))
        let refused = try #require(try client.reply(), "no answer from the restarted host within 20 s").writeReply
        #expect(!refused.accepted)
        #expect(refused.rejection.code == .notJoined, "got \(refused.rejection.code): \(refused.rejection.message)")
        #expect(refused.rejection.message.contains("hello"), "the reason says what to do: \(refused.rejection.message)")
        #expect(second.value(of: "counter", in: "SharedData") == expected, "a write on a connection that never said hello was applied")

        try client.hello()
        let applied = try #require(
            try {
                try client.send(Self.write(2, id: 2))
                return try client.reply()
            }()
        ).writeReply
        #expect(applied.accepted, "refused after the hello: \(applied.rejection.message)")
        let two: Value = .int(2)
        #expect(second.value(of: "counter", in: "SharedData") == two)
    }

    @Test("a replica whose writes meet a restarted host says hello again and has every write applied once, in order")
    func replicaAcrossRestart() async throws {
        let folder = Fixtures.temporaryFolder()
        let first = try await Fixtures.host(folder: folder)
        let replica = try await Fixtures.liveReplica("SharedData", of: first)
        defer { replica.close() }
        _ = try await replica.write("counter", to: 1).accepted()
        first.stop()
        let second = try await Fixtures.host(folder: folder)
        defer { second.stop() }
        // Made at once, before the replica has noticed the restart: they go on the socket
        // ZeroMQ reconnected underneath it.
        let receipts = (Int64(2)...200).map { replica.write("counter", to: .int($0)) }
        for receipt in receipts { _ = try await receipt.accepted() }
        let last: Value = .int(200)
        #expect(second.value(of: "counter", in: "SharedData") == last)
        #expect(second.statistics.writesAccepted == 199, "accepted \(second.statistics.writesAccepted) of 199 writes")
    }
}
