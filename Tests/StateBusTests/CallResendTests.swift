import Foundation
@_spi(Testing) import StateBus
import Testing

/// A model whose action counts how often it ran.
@MainActor @SharedModel("Tally")
final class TallyModel {
    var runs: Int = 0
    var note: String = ""

    /// Counts one run.
    @Action func bump() async throws -> Int {
        runs += 1
        return runs
    }
}

@MainActor
@Suite("A call is never run twice by a reconnection")
struct CallResendTests {
    @Test("a call that ran but whose answer was lost fails interrupted when the host refuses the connection; it does not run again")
    func ranCallIsNotSentAgain() async throws {
        let model = TallyModel()
        var configuration = HostConfiguration(name: "tally", controlEndpoint: "ipc://\(Fixtures.temporaryFolder())/control")
        // Room for one connection: a second one makes the host forget the silent first.
        configuration.maxClients = 1
        configuration.persistence = .disabled
        let host = try await StateHost(serving: [model], configuration: configuration)
        defer { host.stop() }
        // A long request timeout: the replica stays quiet (no ping) meanwhile. A long heartbeat
        // tolerance too: a reconnection for silence while the suite loads the machine would
        // say hello, and the dropped reply would be its welcome instead of the call's answer.
        // Longer than the call may wait for the main actor early in a full run (above 20 s
        // seen): a ping then would take the dropped reply instead of the call's answer.
        var replicaConfiguration = ReplicaConfiguration(nodeName: "caller", missedHeartbeatsBeforeStale: 600, requestTimeout: .seconds(150))
        replicaConfiguration.callTimeout = .seconds(150)
        let replica = try Replica(object: "Tally", controlEndpoint: host.controlEndpoint, configuration: replicaConfiguration)
        defer { replica.close() }
        try await replica.waitUntilLive(timeout: .seconds(20))

        // The call runs on the host; its answer is lost on the way back.
        host.dropNextRepliesForTesting(1)
        let call = Task { try await replica.call("bump") }
        // As long as the call may take (callTimeout): the action runs on the main actor, which
        // the suite's other model tests share, and early in a full run on 2 cores it waited
        // more than 20 s in 3 of 9 runs.
        let deadline = ContinuousClock.now + .seconds(120)
        while host.statistics.callsSucceeded < 1 {
            guard ContinuousClock.now < deadline else { throw StateBusError(.timeout, "the call did not finish on the host in 120 s") }
            try await Task.sleep(for: .milliseconds(10))  // between two looks at the host's counters
        }
        #expect(model.runs == 1)
        // Another connection (this listing) makes the host forget the replica's: its next
        // request there is refused as not joined, and the replica connects again.
        _ = try await ConnectedView.list(controlEndpoint: host.controlEndpoint)
        _ = try await replica.write("note", to: "after the eviction").accepted()

        // Before, every call sent on the refused connection went again: this one ran twice.
        do {
            let result = try await call.value
            Issue.record("the call was answered \(result): it was sent again and ran \(model.runs) times")
        } catch let error as StateBusError {
            #expect(error.code == .interrupted, "\(error)")
        }
        #expect(model.runs == 1)
        // A call made now runs once, on the new connection.
        #expect(try await replica.call("bump") == .int(2))
    }
}
