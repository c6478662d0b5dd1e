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
}
