import Foundation
@_spi(Testing) import StateBus
import StateBusRuntime
import StateBusWire
import Testing
import ZeroMQ

/// Confirmation by echo (PROTOCOL.md, "Confirmation by echo"): a view that asks for it takes
/// the publication of its own write as the write's acceptance, and the host sends it no
/// answer for a write it accepts and publishes at once.
@Suite("Writes confirmed by their echo")
struct EchoConfirmationTests {
    /// Sends an accepted write (id 1), a refused one (id 2) and a ping from a raw client, and
    /// returns what it is answered, in order, up to the ping's pong.
    private func answers(confirmsByEcho: Bool, heartbeat: Duration? = .milliseconds(200)) async throws -> [String] {
        let host = try await Fixtures.host(heartbeat: heartbeat)
        defer { host.stop() }
        // The raw client's receives block: on a thread of their own, not one of the two that
        // run every test's async code (and a served model's actions). The checks are made
        // here, on the test's task, from what it returns.
        let (granted, answers, appliedFirst) = try await onThreadOfItsOwn { () throws -> (Bool, [String], Bool) in
            let context = try Context()
            defer { context.terminate() }
            let client = try RawClient(context: context, endpoint: host.controlEndpoint)
            defer { client.socket.close() }
            let welcome = try client.hello(confirmsByEcho: confirmsByEcho)
            try client.send(RawClient.request(id: 10, RawClient.write(object: "SharedData", property: "counter", value: .int(5), writeID: 1)))
            try client.send(RawClient.request(id: 11, RawClient.write(object: "SharedData", property: "noSuchProperty", value: .int(1), writeID: 2)))
            // The pong comes after anything the host would still answer to the writes.
            try client.send(RawClient.request(id: 12, .ping(Statebus_V1_Ping())))
            var answers: [String] = []
            var appliedFirst = true
            while true {
                guard let reply = try client.reply() else { throw StateBusError(.timeout, "no answer within 20 s after \(answers)") }
                switch reply.body {
                case .writeReply(let answer): answers.append("write \(answer.writeID) \(answer.accepted ? "accepted" : "refused")")
                case .pong: return (welcome.confirmsByEcho, answers, appliedFirst)
                default: answers.append("\(reply)")
                }
                if host.value(of: "counter", in: "SharedData") != 5 { appliedFirst = false }
            }
        }
        // The welcome says whether the host grants it: the view then knows to send its
        // unanswered writes again after a resync.
        #expect(granted == (confirmsByEcho && heartbeat != nil))
        // Handled in order: the accepted write was applied before anything was answered.
        #expect(appliedFirst, "an answer came before the accepted write was applied")
        return answers
    }

    @Test(
        "the host answers a view that confirms by echo only for what it refuses; others, and any view of a host without heartbeats, get every answer"
    )
    func noAnswerToAcceptedWrites() async throws {
        #expect(try await answers(confirmsByEcho: true) == ["write 2 refused"])
        #expect(try await answers(confirmsByEcho: false) == ["write 1 accepted", "write 2 refused"])
        // Without heartbeats the view could not learn that its write's publication was lost.
        #expect(try await answers(confirmsByEcho: true, heartbeat: nil) == ["write 1 accepted", "write 2 refused"])
    }

    @Test("a write whose echo was lost is confirmed once the view has resynchronised, and applied once")
    func lostEchoConfirmedAfterResync() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        // Patient with silence: a reconnection for missed heartbeats on a loaded machine
        // would send the write again once more, and count a second copy.
        var configuration = ReplicaConfiguration(missedHeartbeatsBeforeStale: 60, requestTimeout: .seconds(10))
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
        // Patient with silence, as above: here no copy may be counted at all.
        var configuration = ReplicaConfiguration(missedHeartbeatsBeforeStale: 60, requestTimeout: .seconds(10))
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
