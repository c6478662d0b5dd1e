import Foundation
import StateBus
import StateBusRuntime
import Synchronization
import Testing
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// `ReplicaConfiguration.busyPollingForAnswers`: a view's loop polls through a write's
/// round trip, and goes back to sleep as soon as the answer is in, not when its polling time
/// runs out (a view that wrote once must not keep a CPU busy).
@Suite("A view polls busily only while an answer is awaited")
struct AnswerPollingTests {
    @Test(
        "a view whose write was answered sleeps again at once, although it may poll for a minute",
        .disabled(if: ThreadAffinity.allowedCPUs.count < 2, "busy polling needs two CPUs"))
    func sleepsOnceAnswered() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        var configuration = ReplicaConfiguration(nodeName: "polling-view")
        configuration.busyPollingForAnswers = .seconds(60)
        let replica = try Replica(object: "SharedData", controlEndpoint: host.controlEndpoint, configuration: configuration)
        defer { replica.close() }
        try await replica.waitUntilLive(timeout: .seconds(20))
        _ = try await replica.write("counter", to: .int(1)).accepted()
        try await replica.waitFor(timeout: .seconds(20), "the echo") { $0.pendingWriteCount == 0 }
        // A call's answer ends the polling too (here a refusal: the object has no actions).
        let refusal = await #expect(throws: StateBusError.self) { _ = try await replica.call("noSuchAction", timeout: .seconds(20)) }
        #expect(refusal?.code != .timeout, "\(String(describing: refusal))")
        // Judged against what a spinning thread gets over the same second: a loop still
        // polling gets about as much, a sleeping one a small part of it, however busy the
        // machine is (a fixed bound failed on a machine running two test suites at once).
        let spinner = SpinningThread()
        let used = try await loopCPUTime(of: replica, over: .seconds(1))
        let available = spinner.stop()
        #expect(used < available / 4, "the view's loop used \(used) of CPU in 1 s after its answers came; a spinning thread got \(available)")
    }
}

/// The CPU time the replica's loop thread used during `window`, read on that thread.
private func loopCPUTime(of replica: Replica, over window: Duration) async throws -> Duration {
    let before = await Task(executorPreference: replica.executor) { threadCPUTime() }.value
    try await Task.sleep(for: window)  // the window measured, not a wait for an event
    let after = await Task(executorPreference: replica.executor) { threadCPUTime() }.value
    return after - before
}

private func threadCPUTime() -> Duration {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
}

/// A thread that spins until stopped, to measure how much CPU a busy thread gets meanwhile.
private final class SpinningThread: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let used = Locked<Duration?>(nil)

    init() {
        let thread = Thread { [self] in
            let start = threadCPUTime()
            while !stopped.load(ordering: .relaxed) {}
            used.withLock { $0 = threadCPUTime() - start }
        }
        thread.start()
    }

    /// Stops the thread and returns the CPU time it used.
    func stop() -> Duration {
        stopped.store(true, ordering: .relaxed)
        while true {
            if let used = used.withLock({ $0 }) { return used }
            sched_yield()
        }
    }
}
