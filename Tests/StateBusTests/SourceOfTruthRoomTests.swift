import Dispatch
import StateBusWire
import Testing

@testable import StateBus

/// The source of truth's wait for room in its queue (`HostLimits.maxUnpublishedBytes`), with
/// no loop taking the queue: what a host whose loop is stuck does to its own changes.
@Suite("SourceOfTruth: waiting for room in the queue")
struct SourceOfTruthRoomTests {
    static func truth(bound: Int, wait: Duration) -> SourceOfTruth {
        SourceOfTruth(
            epoch: 1, objects: [ObjectDefinition("Feed", properties: [PropertyDefinition("counter", default: 0)])],
            limits: HostLimits(maxUnpublishedBytes: bound, unpublishedRoomWait: wait))
    }

    @Test("a change that finds the queue full waits its time, fails with overloaded and is not made; a take makes room")
    func fullQueueRefusesAfterTheWait() throws {
        let truth = Self.truth(bound: 2_048, wait: .milliseconds(200))
        var made = 0
        var refusal: StateBusError?
        let started = ContinuousClock.now
        while refusal == nil, made < 10_000 {
            do {
                _ = try truth.apply(PropertyChange("counter", to: .int(Int64(made + 1))), to: "Feed", roomWait: .milliseconds(200))
                made += 1
            } catch {
                refusal = error
            }
        }
        #expect(ContinuousClock.now - started >= .milliseconds(200), "the refused change waited for room first")
        #expect(refusal?.code == .overloaded)
        #expect(refusal?.message.contains("maxUnpublishedBytes") == true)
        #expect(made > 0 && made < 2_048 / MemoryLayout<Int>.size)
        #expect(truth.withStore("Feed") { $0.value(of: "counter") } == .int(Int64(made)), "the refused change was not made")

        // The loop's own writes (no room wait) still go in; a take empties the queue.
        _ = try truth.apply([PropertyChange("counter", to: -1)], to: "Feed", fromView: "view", writeID: 1)
        #expect(truth.takeUnpublished().batches.count == made + 1)
        _ = try truth.apply(PropertyChange("counter", to: .int(Int64(made + 1))), to: "Feed", roomWait: .milliseconds(200))
    }

    @Test("a change waiting for room goes in as soon as another thread takes the queue")
    func waitingChangeGoesInAfterATake() async throws {
        let truth = Self.truth(bound: 1_024, wait: .seconds(60))
        var made = 0
        while truth.inner.withLock({ $0.unpublishedBytes }) < 1_024 {
            made += 1
            _ = try truth.apply(PropertyChange("counter", to: .int(Int64(made))), to: "Feed", roomWait: .seconds(60))
        }
        let sequence = await withCheckedContinuation { (continuation: CheckedContinuation<UInt64?, Never>) in
            DispatchQueue.global().async {
                continuation.resume(returning: try? truth.apply(PropertyChange("counter", to: 0), to: "Feed", roomWait: .seconds(60)).sequence)
            }
            _ = truth.takeUnpublished()
        }
        #expect(sequence == UInt64(made + 1))
    }

    @Test("a published burst's batches are released by the host code's next change, or by the loop once the burst is over")
    func publishedBurstReleased() throws {
        let truth = Self.truth(bound: 8 << 20, wait: .seconds(60))
        func burst(_ count: Int) throws -> [AppliedBatch] {
            for value in 0..<count { _ = try truth.apply(PropertyChange("counter", to: .int(Int64(value))), to: "Feed", roomWait: .seconds(60)) }
            return truth.takeUnpublished().batches
        }
        func left() -> Int { truth.inner.withLock { $0.publishedBurst.count } }

        truth.recycle(try burst(SourceOfTruth.burstBatches))
        #expect(left() == SourceOfTruth.burstBatches, "a burst's published queue waits for the host's code")
        _ = try truth.apply(PropertyChange("counter", to: 1), to: "Feed", roomWait: .seconds(60))
        #expect(left() == 0, "the host's next change released it")
        #expect(truth.inner.withLock { $0.unpublished.count } == 1)

        // The change above is taken with this burst.
        truth.recycle(try burst(SourceOfTruth.burstBatches * 2))
        #expect(left() == SourceOfTruth.burstBatches * 2 + 1)
        // A view's write, applied on the loop, leaves it; the loop's next small publication
        // (the burst is over) releases it.
        _ = try truth.apply([PropertyChange("counter", to: 2)], to: "Feed", fromView: "view", writeID: 1)
        #expect(left() == SourceOfTruth.burstBatches * 2 + 1)
        truth.recycle(truth.takeUnpublished().batches)
        #expect(left() == 0)
    }

    @Test("what a group commit holds back counts against the bound: a change waits for its release, and goes in once it is")
    func heldBatchesCount() async throws {
        let truth = Self.truth(bound: 4_096, wait: .milliseconds(200))
        truth.noteHeld(bytes: 4_096)
        do {
            _ = try truth.apply(PropertyChange("counter", to: 1), to: "Feed", roomWait: .milliseconds(200))
            Issue.record("a change went in while the commit held the whole bound")
        } catch {
            #expect(error.code == .overloaded)
            #expect(error.message.contains("4096 of them waiting for a commit"), "\(error.message)")
        }
        let sequence = await withCheckedContinuation { (continuation: CheckedContinuation<UInt64?, Never>) in
            DispatchQueue.global().async {
                continuation.resume(returning: try? truth.apply(PropertyChange("counter", to: 2), to: "Feed", roomWait: .seconds(60)).sequence)
            }
            truth.noteHeld(bytes: 0)
        }
        #expect(sequence == 1)
    }
}
