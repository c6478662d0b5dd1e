import StateBusRuntime
import Synchronization
import Testing

@testable import ZeroMQ

@Suite("The end of an I/O loop's thread")
struct LoopThreadEndTests {
    @Test("a loop stopped from its own thread runs its shutdown hooks and lets its thread go")
    func stoppedFromItsOwnThread() async throws {
        let loop = try IOLoop(context: try Context())
        let hookRan = Atomic<Bool>(false)
        let accepted = loop.execute { thread in
            _ = thread.onShutdown { hookRan.store(true, ordering: .relaxed) }
            loop.shutdown()
        }
        #expect(accepted)
        // Readiness: the thread's last step, after the sockets are closed.
        try #require(await withDeadline(.seconds(20)) { await loop.waitForThreadEnd() } != nil, "the loop's thread did not end within 20 s")
        let held = loop.threadIsHeld
        #expect(!held, "nobody joins the thread, and it was not detached")
        #expect(loop.isShutDown)
        let ran = hookRan.load(ordering: .relaxed)
        #expect(ran)
        let acceptedAfter = loop.execute { _ in Issue.record("work ran on a stopped loop") }
        #expect(!acceptedAfter)
        // A later shutdown from outside has nothing to wait for, and returns.
        loop.shutdown()
    }

    @Test("a thread created after the loop's thread ended is not the loop's thread")
    func threadIDGoesWithTheThread() throws {
        let loop = try IOLoop(context: try Context())
        loop.shutdown()
        // glibc gives a new thread the identity (pthread_t) of one that ended, as a rule: each
        // of these threads would have passed for the loop's thread if the id had stayed.
        let passedForLoop = Atomic<Int>(0)
        for _ in 0..<8 {
            let thread = JoinableThread(name: "not-the-loop") {
                if loop.isOnLoopThread { passedForLoop.add(1, ordering: .relaxed) }
            }
            thread.join()
        }
        let count = passedForLoop.load(ordering: .relaxed)
        #expect(count == 0)
    }
}
