import Foundation
@_spi(Testing) import StateBus
import StateBusWire
import Testing
import ZeroMQ

/// Confirmation by echo (PROTOCOL.md, "Confirmation by echo"): a view that asks for it takes
/// the publication of its own write as the write's acceptance, and the host sends it no
/// answer for a write it accepts and publishes at once.
@Suite("Writes confirmed by their echo")
struct EchoConfirmationTests {
    /// Sends an accepted write (id 1) and then a refused one (id 2) from a raw client, and
    /// returns the write id of the first answer the client gets.
    private func firstAnswer(confirmsByEcho: Bool) async throws -> (writeID: UInt64, accepted: Bool) {
        let host = try await Fixtures.host()
        defer { host.stop() }
        let context = try Context()
        defer { context.terminate() }
        let client = try RawClient(context: context, endpoint: host.controlEndpoint)
        defer { client.socket.close() }
        try client.hello(confirmsByEcho: confirmsByEcho)
        try client.send(RawClient.request(id: 10, RawClient.write(object: "SharedData", property: "counter", value: .int(5), writeID: 1)))
        try client.send(RawClient.request(id: 11, RawClient.write(object: "SharedData", property: "noSuchProperty", value: .int(1), writeID: 2)))
        let reply = try #require(try client.reply(), "no answer within 20 s")
        guard case .writeReply(let answer) = reply.body else { throw StateBusError(.badRequest, "not a write's answer: \(reply)") }
        // Handled in order: the accepted write was applied before the refused one was answered.
        #expect(host.value(of: "counter", in: "SharedData") == 5)
        return (answer.writeID, answer.accepted)
    }

    @Test("the host answers a view that confirms by echo only for what it refuses; others get every answer")
    func noAnswerToAcceptedWrites() async throws {
        let echoed = try await firstAnswer(confirmsByEcho: true)
        #expect(echoed.writeID == 2 && !echoed.accepted, "the first answer was to write \(echoed.writeID)")
        let answered = try await firstAnswer(confirmsByEcho: false)
        #expect(answered.writeID == 1 && answered.accepted, "the first answer was to write \(answered.writeID)")
    }

    @Test("a write whose echo was lost is confirmed once the view has resynchronised, and applied once")
    func lostEchoConfirmedAfterResync() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        var configuration = ReplicaConfiguration()
        // Long enough that the heartbeat's resync comes first; short enough that a receipt
        // left waiting fails this test within a minute.
        configuration.writeTimeout = .seconds(45)
        let replica = try Replica(object: "SharedData", controlEndpoint: host.controlEndpoint, configuration: configuration)
        defer { replica.close() }
        try await replica.waitUntilLive(timeout: .seconds(20))
        let before = host.statistics
        host.dropNextPublicationsForTesting(1)
        let sequence = try await replica.write("counter", to: 41).accepted()
        #expect(sequence == host.sequence(of: "SharedData"))
        #expect(replica["counter"] == 41 && host.value(of: "counter", in: "SharedData") == 41)
        let after = host.statistics
        // Applied once; the copy sent after the resync was answered from the ledger.
        #expect(after.writesAccepted - before.writesAccepted == 1)
        #expect(after.duplicateWrites - before.duplicateWrites == 1)
        #expect(replica.statistics.appliedSnapshots >= 2)
    }

    @Test("a replica that does not confirm by echo is answered and converges as before")
    func answeredWhenNotConfirmingByEcho() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        var configuration = ReplicaConfiguration()
        configuration.confirmsWritesByEcho = false
        let replica = try Replica(object: "SharedData", controlEndpoint: host.controlEndpoint, configuration: configuration)
        defer { replica.close() }
        try await replica.waitUntilLive(timeout: .seconds(20))
        // The echo lost: only the answer can confirm the write, and it does at once.
        host.dropNextPublicationsForTesting(1)
        let sequence = try await replica.write("counter", to: 7).accepted()
        #expect(sequence == host.sequence(of: "SharedData"))
        try await replica.waitFor(timeout: .seconds(20), "the heartbeat's resync") { $0["counter"] == 7 }
        #expect(host.statistics.duplicateWrites == 0)
    }
}
