import Foundation
@_spi(Testing) import StateBus
import StateBusWire
import Testing
import ZeroMQ

/// Durable writes across a host restart: the answer is stored with the values, so a copy of
/// the write that reaches the next host is answered, not applied a second time.
@Suite("Exactly once across restarts")
struct ExactlyOnceTests {
    static let counter = ObjectDefinition("Counter", properties: [PropertyDefinition("count", default: 0, persisted: true)])

    static func host(_ folder: String) async throws -> StateHost {
        try await StateHost(
            objects: [counter],
            configuration: HostConfiguration(name: "once", controlEndpoint: "ipc://\(folder)/control", persistence: .file("\(folder)/once.sqlite")))
    }

    /// Sends a write of `count = value` as view "raw" with write id 1 and returns the answer.
    static func write(_ value: Int64, through client: RawClient) throws -> Statebus_V1_WriteReply? {
        try client.send(RawClient.request(RawClient.write(object: "Counter", property: "count", value: .int(value))))
        return try client.reply()?.writeReply
    }

    @Test("a durable write sent again to the next host is answered as accepted and not applied again; a new write with the same ids is applied")
    func copyAfterRestart() async throws {
        let folder = Fixtures.temporaryFolder()
        let context = try Context()
        let first = try await Self.host(folder)
        let client = try RawClient(context: context, endpoint: first.controlEndpoint)
        try client.hello()
        #expect(try Self.write(1, through: client)?.accepted == true)
        // Another writer's acknowledged value comes after it.
        try await first.updateDurably("count", to: 2, in: "Counter")
        first.stop()
        client.socket.close()

        let second = try await Self.host(folder)
        defer { second.stop() }
        #expect(second.value(of: "count", in: "Counter") == 2)
        let again = try RawClient(context: context, endpoint: second.controlEndpoint)
        defer { again.socket.close() }
        try again.hello()
        // The copy: the view never heard the first answer and sends the same write again.
        let answer = try #require(try Self.write(1, through: again))
        #expect(answer.accepted, "the copy was refused: \(answer.rejection.message)")
        #expect(second.value(of: "count", in: "Counter") == 2, "the copy was applied again over a later acknowledged value")
        #expect(second.statistics.duplicateWrites == 1)
        // A different write that reuses the ids (a restarted process with the same view id)
        // is not a copy.
        let different = try #require(try Self.write(3, through: again))
        #expect(different.accepted)
        #expect(second.value(of: "count", in: "Counter") == 3)
    }
}
