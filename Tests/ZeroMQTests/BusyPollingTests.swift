import Testing
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// `LoopThread.pollBusily(for:)`: a loop asked to poll instead of sleeping still serves its
/// work and timers at once, burns a CPU only until it is told to stop, and never does on a
/// thread pinned to one CPU. The CPU a loop used is read from its thread's own clock.
@Suite("Busy polling on an I/O loop")
struct BusyPollingTests {
    /// Busy polling is off on a thread that may use only one CPU.
    static let oneCPU = ThreadAffinity.allowedCPUs.count < 2

    @Test("a loop polling busily runs a due timer and work from another thread at once")
    func servesWhilePolling() async throws {
        let loop = try IOLoop(context: try Context())
        defer { loop.shutdown() }
        let fired = AsyncStream<String>.makeStream()
        loop.execute { thread in
            thread.pollBusily(for: .seconds(600))
            _ = thread.scheduleTimer(after: .milliseconds(10)) { fired.continuation.yield("timer") }
        }
        // Both within a deadline far below the ten minutes of polling asked for.
        let timer = try await withDeadline(.seconds(20)) { await fired.stream.first { _ in true } }
        #expect(timer == "timer")
        let answer = try await withDeadline(.seconds(20)) { try await loop.submit { _ in 42 } }
        #expect(answer == 42)
        _ = try await loop.submit { thread in thread.stopPollingBusily() }
    }

    @Test("a loop burns a CPU while polling busily and sleeps again once told to stop", .disabled(if: oneCPU, "busy polling needs two CPUs"))
    func sleepsAfterStop() async throws {
        let loop = try IOLoop(context: try Context())
        defer { loop.shutdown() }
        _ = try await loop.submit { thread in thread.pollBusily(for: .seconds(600)) }
        let whilePolling = try await cpuUsed(by: loop, over: .milliseconds(500))
        #expect(whilePolling > .milliseconds(20), "a loop polling busily used only \(whilePolling) of CPU in 500 ms")
        _ = try await loop.submit { thread in thread.stopPollingBusily() }
        let afterStop = try await cpuUsed(by: loop, over: .milliseconds(500))
        #expect(afterStop < .milliseconds(20), "a loop told to stop polling still used \(afterStop) of CPU in 500 ms")
    }

    @Test("a loop pinned to one CPU never polls busily: it would hold back libzmq's I/O thread there")
    func pinnedLoopSleeps() async throws {
        let cpu = try #require(ThreadAffinity.allowedCPUs.first)
        let loop = try IOLoop(context: try Context(ioThreadCPU: cpu), cpu: cpu)
        defer { loop.shutdown() }
        _ = try await loop.submit { thread in thread.pollBusily(for: .seconds(600)) }
        let used = try await cpuUsed(by: loop, over: .milliseconds(500))
        #expect(used < .milliseconds(20), "a pinned loop asked to poll busily used \(used) of CPU in 500 ms")
    }
}

/// The CPU time `loop`'s thread used during `window` (read on that thread, before and after).
func cpuUsed(by loop: IOLoop, over window: Duration) async throws -> Duration {
    let before = try await loop.submit { _ in threadCPUTime() }
    try await Task.sleep(for: window)  // the window measured, not a wait for an event
    let after = try await loop.submit { _ in threadCPUTime() }
    return after - before
}

/// The calling thread's CPU time.
func threadCPUTime() -> Duration {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
}

/// The result of `body`, or a failure once `limit` passes first.
func withDeadline<Result: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> Result) async throws -> Result {
    try await withThrowingTaskGroup(of: Result?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let result = first else {
            throw DeadlinePassed(limit: limit)
        }
        return result
    }
}

/// A wait in a test ran out.
struct DeadlinePassed: Error, CustomStringConvertible {
    let limit: Duration
    var description: String { "no answer within \(limit)" }
}
