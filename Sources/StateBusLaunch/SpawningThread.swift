import Foundation
import StateBusRuntime

/// The one thread that starts every child of this process, alive until the process ends.
///
/// A child asks the kernel for a signal when its parent dies (`PR_SET_PDEATHSIG`), and
/// Linux sends it when the *thread* that forked the child ends, not the process. Swift's
/// task pool and Foundation's threads end when idle, so a child forked from one of them
/// would be stopped at a random moment; forked from this thread, it is stopped exactly when
/// the process ends, however it ends (SIGKILL included).
final class SpawningThread: Sendable {
    /// The process's spawning thread, started on first use.
    static let shared = SpawningThread()

    private let jobs = Locked<[@Sendable () -> Void]>([])
    private let jobQueued = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [self] in serve() }
        thread.name = "statebus-spawn"
        thread.start()
    }

    /// The thread's life: each queued job in turn, forever.
    private func serve() -> Never {
        while true {
            jobQueued.wait()
            let job = jobs.withLock { $0.removeFirst() }
            job()
        }
    }

    /// Runs `body` on the spawning thread and returns its result; the calling thread waits
    /// (a vfork and an exec: well under a millisecond).
    func run<Value: Sendable>(_ body: @escaping @Sendable () -> Value) -> Value {
        let result = ResultSlot<Value>()
        jobs.withLock { $0.append { result.fill(body()) } }
        jobQueued.signal()
        return result.take()
    }
}

/// A value handed from one thread to another that waits for it.
private final class ResultSlot<Value: Sendable>: Sendable {
    private let value = Locked<Value?>(nil)
    private let filled = DispatchSemaphore(value: 0)

    func fill(_ newValue: Value) {
        value.withLock { $0 = newValue }
        filled.signal()
    }

    func take() -> Value {
        filled.wait()
        // `fill` stored the value before it signalled.
        return value.withLock { $0.take()! }
    }
}
