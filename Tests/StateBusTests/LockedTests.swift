import Foundation
import StateBusRuntime
import Testing

/// `Locked`, the lock every shared state in the package sits behind (a pthread mutex, which
/// ThreadSanitizer sees, unlike `Synchronization.Mutex`'s futex on Linux).
@Suite("Locked: one thread at a time in the value")
struct LockedTests {
    @Test("increments from many threads at once all count, and none is lost")
    func incrementsFromManyThreads() {
        let count = Locked(0)
        let threads = 8
        let each = 20_000
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<each { count.withLock { $0 += 1 } }
        }
        #expect(count.withLock { $0 } == threads * each)
    }

    @Test("withLock returns the body's result and rethrows its error with the value as the body left it")
    func resultsAndErrors() {
        struct Refused: Error, Equatable {}
        let log = Locked<[String]>([])
        let size = log.withLock { log in
            log.append("a")
            return log.count
        }
        #expect(size == 1)
        #expect(throws: Refused.self) {
            try log.withLock { (log: inout [String]) throws(Refused) -> Void in
                log.append("b")
                throw Refused()
            }
        }
        #expect(log.withLock { $0 } == ["a", "b"])
    }

    @Test("a wait for a condition ends when another thread makes it hold and signals, or at its timeout with ready false")
    func waitsForACondition() async {
        let box = Locked(0)
        let seen = await withCheckedContinuation { (continuation: CheckedContinuation<(Int, Bool), Never>) in
            DispatchQueue.global().async {
                // The longest timeout there is: "as long as it takes" must not overflow.
                continuation.resume(returning: box.withLock(waitingUpTo: .seconds(Int64.max), until: { $0 >= 3 }) { ($0, $1) })
            }
            for _ in 0..<3 {
                box.withLock { $0 += 1 }
                box.signalAll()
            }
        }
        #expect(seen.0 == 3 && seen.1)
        let started = ContinuousClock.now
        let timedOut = box.withLock(waitingUpTo: .milliseconds(100), until: { $0 > 3 }) { ($0, $1) }
        #expect(timedOut.0 == 3 && !timedOut.1)
        #expect(ContinuousClock.now - started >= .milliseconds(100), "it waited its whole timeout")
    }
}
