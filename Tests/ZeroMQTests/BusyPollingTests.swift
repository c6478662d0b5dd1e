import StateBusRuntime
import Testing
import ZeroMQ

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
        let timer = try #require(await withDeadline(.seconds(20)) { await fired.stream.first { _ in true } }, "no timer fired within 20 s")
        #expect(timer == "timer")
        let answer = try #require(await withDeadline(.seconds(20)) { try await loop.submit { _ in 42 } }, "no answer within 20 s")
        #expect(answer == 42)
        _ = try await loop.submit { thread in thread.stopPollingBusily() }
    }

    @Test("a loop burns a CPU while polling busily and sleeps again once told to stop", .disabled(if: oneCPU, "busy polling needs two CPUs"))
    func sleepsAfterStop() async throws {
        let loop = try IOLoop(context: try Context())
        defer { loop.shutdown() }
        _ = try await loop.submit { thread in thread.pollBusily(for: .seconds(600)) }
        // However long a busy machine takes to give it, a polling loop reaches 200 ms of CPU;
        // a sleeping one would use a few milliseconds in a minute.
        let whilePolling = try await cpuUsed(by: loop, reaching: .milliseconds(200), within: .seconds(60))
        #expect(whilePolling >= .milliseconds(200), "a loop polling busily used only \(whilePolling) of CPU in 60 s")
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
