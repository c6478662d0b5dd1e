import Dispatch
import Foundation
import StateBus
import StateBusWire
import Testing

/// The bound on what the host's own changes may queue before its loop publishes them
/// (`HostLimits.maxUnpublishedBytes`): code that changes the host faster than the loop
/// publishes waits for room instead of growing the host's memory, and nothing is lost on the
/// way; a stopped host refuses them. (A loop that does not take the queue, and a commit that
/// holds batches back: `SourceOfTruthRoomTests`.)
@Suite("The host's queue of its own changes is bounded in bytes")
struct UnpublishedBoundTests {
    static func host(limits: HostLimits) async throws -> StateHost {
        let folder = Fixtures.temporaryFolder()
        var configuration = HostConfiguration(
            name: "queue", controlEndpoint: "ipc://\(folder)/control", heartbeatInterval: .milliseconds(200), persistence: .disabled)
        configuration.limits = limits
        let object = ObjectDefinition("Feed", properties: [PropertyDefinition("counter", default: 0)])
        return try await StateHost(objects: [object], configuration: configuration)
    }

    @Test("updates made in a tight loop against a queue of 2 KiB all reach a view, in order")
    func tightLoopLosesNothing() async throws {
        let host = try await Self.host(limits: HostLimits(maxUnpublishedBytes: 2_048))
        defer { host.stop() }
        let replica = try await Fixtures.liveReplica("Feed", of: host)
        defer { replica.close() }
        let updates = 20_000
        // From a thread of its own, as code that feeds a host from elsewhere does: each
        // update that finds the queue full waits there until the loop has taken it.
        let last = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<UInt64, any Error>) in
            DispatchQueue.global().async {
                do {
                    var sequence: UInt64 = 0
                    for value in 1...updates { sequence = try host.update("counter", to: .int(Int64(value)), in: "Feed") }
                    continuation.resume(returning: sequence)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
        #expect(last == UInt64(updates))
        try await replica.waitFor(timeout: .seconds(60), "the last update") { $0.sequence == last }
        #expect(replica["counter"] == .int(Int64(updates)))
        #expect(replica.statistics.appliedSnapshots == 1, "the view followed every batch, with no resync after its join")
    }

    @Test("a stopped host refuses its own changes with closed: nothing it would never publish is made")
    func stoppedHostRefuses() async throws {
        let host = try await Self.host(limits: HostLimits())
        _ = try host.update("counter", to: 1, in: "Feed")
        host.stop()
        #expect(throws: StateBusError.self) { _ = try host.update("counter", to: 2, in: "Feed") }
        do {
            _ = try host.apply([PropertyChange("counter", to: 3)], to: "Feed")
            Issue.record("a stopped host took a change")
        } catch {
            #expect(error.code == .closed)
            #expect(error.message.contains("stopped"))
        }
        #expect(host.value(of: "counter", in: "Feed") == 1, "the refused changes were not made")
    }
}
