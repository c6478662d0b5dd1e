import CZeroMQ
import StateBusRuntime
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An I/O loop: a thread of its own that owns a set of sockets and polls them.
///
/// libzmq sockets must stay on one thread, and `zmq_poll` blocks, so neither belongs on
/// Swift's cooperative pool. An `IOLoop` runs the poll on a dedicated thread; the rest of
/// the program hands it work with ``execute(_:)`` or ``submit(_:)``, which run closures on
/// the loop thread with a ``LoopThread`` to create sockets, register read handlers and
/// timers. ``AsyncSocket`` builds an `AsyncSequence` bridge on top.
///
/// The loop wakes for new work through an eventfd, and only when it is asleep in the poll:
/// a burst of `execute` calls costs one wake-up.
///
/// ``shutdown()`` stops the loop promptly, runs the shutdown hooks, closes every registered
/// socket and joins the thread, so terminating the context afterwards does not hang.
public final class IOLoop: Sendable {
    /// The context the loop's sockets are made in.
    public let context: Context

    struct PendingWork: Sendable {
        let run: @Sendable (LoopThread) -> Void
        /// Called instead of `run` when the loop stops first, so no caller waits forever.
        let cancel: (@Sendable () -> Void)?
    }

    struct Shared {
        var work: [PendingWork] = []
        var sleeping = false
        var stopping = false
    }

    let shared = Locked(Shared())
    let wakeFD: Int32
    private let thread: Locked<JoinableThread?> = Locked(nil)
    private let threadID = Atomic<UInt>(0)
    /// Who waits for the thread to end (``waitForThreadEnd()``); `nil` once it has.
    private let threadEndWaiters = Locked<[CheckedContinuation<Void, Never>]?>([])

    /// Starts a loop thread.
    /// - Parameters:
    ///   - context: the context for the loop's sockets.
    ///   - name: the thread's name, shown by `top -H`.
    ///   - cpu: pins the loop thread to this CPU (the low-latency profile, beside the
    ///     context's I/O thread on the same CPU); `nil` lets the kernel place it.
    /// - Throws: `ZeroMQError` if an eventfd cannot be made.
    public init(context: Context, name: String = "zmq-io", cpu: Int32? = nil) throws(ZeroMQError) {
        self.context = context
        let fd = czmq_wake_fd()
        guard fd >= 0 else { throw ZeroMQError(code: errno, operation: "eventfd") }
        wakeFD = fd
        let started = JoinableThread(name: name) { [self] in
            self.threadID.store(UInt(pthread_self()), ordering: .releasing)
            // Best effort: a CPU the process may not use leaves the thread where it is.
            if let cpu { ThreadAffinity.pinCurrentThread(to: cpu) }
            LoopThread(loop: self).run()
            self.threadEnded()
        }
        thread.withLock { $0 = started }
    }

    deinit {
        close(wakeFD)
    }

    /// Whether the caller is running on the loop thread.
    public var isOnLoopThread: Bool {
        threadID.load(ordering: .acquiring) == UInt(pthread_self())
    }

    /// Runs `work` on the loop thread, soon, in the order of calls.
    /// - Parameter work: receives the ``LoopThread`` to use sockets, handlers and timers.
    /// - Returns: `false` if the loop has shut down and the work will not run.
    @discardableResult
    public func execute(_ work: @escaping @Sendable (LoopThread) -> Void) -> Bool {
        enqueueWork(PendingWork(run: work, cancel: nil))
    }

    /// Runs `work` on the loop thread, soon, in the order of calls; when the loop stops
    /// before `work` ran, runs `ifStopped` instead (on the thread that stops the loop), so
    /// whoever waits for `work` hears of it.
    /// - Returns: `false` if the loop has stopped already (neither runs).
    @discardableResult
    public func execute(_ work: @escaping @Sendable (LoopThread) -> Void, ifStopped: @escaping @Sendable () -> Void) -> Bool {
        enqueueWork(PendingWork(run: work, cancel: ifStopped))
    }

    /// Queues work for the loop thread, waking it only when it sleeps in the poll.
    /// - Returns: `false` if the loop has stopped (the work will not run).
    func enqueueWork(_ work: PendingWork) -> Bool {
        let mustWake = shared.withLock { state -> Bool? in
            if state.stopping { return nil }
            state.work.append(work)
            if state.sleeping {
                state.sleeping = false
                return true
            }
            return false
        }
        guard let mustWake else { return false }
        if mustWake { wake() }
        return true
    }

    /// Runs `work` on the loop thread and returns its result.
    /// - Parameter work: the work, given the ``LoopThread``.
    /// - Returns: what `work` returns.
    /// - Throws: what `work` throws, or ``IOLoopError/shutDown`` if the loop has stopped.
    public func submit<Result: Sendable>(
        _ work: @escaping @Sendable (LoopThread) throws -> Result
    ) async throws -> Result {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
            let accepted = enqueueWork(
                PendingWork(
                    run: { thread in continuation.resume(with: Swift.Result { try work(thread) }) },
                    cancel: { continuation.resume(throwing: IOLoopError.shutDown) }
                ))
            if !accepted { continuation.resume(throwing: IOLoopError.shutDown) }
        }
    }

    /// Stops the loop: pending work is dropped, shutdown hooks run on the loop thread, every
    /// registered socket is closed, and the thread is joined. Safe to call more than once and
    /// from any thread. On the loop's own thread (in a handler, or in work it runs) it only
    /// asks the loop to stop: the loop then closes its sockets once that work returns, and its
    /// thread ends on its own.
    /// - Returns: whether this call joined the loop's thread, so that every socket of the loop
    ///   is closed when it returns; `false` on the loop's own thread, while another call joins
    ///   it, or once the thread has ended.
    @discardableResult
    public func shutdown() -> Bool {
        let first = shared.withLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        // The thread to join is claimed before the loop is woken: once woken, the loop can
        // close its sockets and end before this thread runs again, and a loop thread that
        // nobody has claimed detaches itself (``threadEnded()``). Claimed after the wake, a
        // busy machine could leave this call with nothing to join, so its caller would not
        // wait for the sockets' linger (a view's goodbye then lost at exit).
        var joining: JoinableThread?
        if !isOnLoopThread {
            joining = thread.withLock { current -> JoinableThread? in
                defer { current = nil }
                return current
            }
        }
        if first { wake() }
        guard let joining else { return false }
        joining.join()
        return true
    }

    /// The loop thread's last step, once its sockets are closed. Its id goes: the kernel gives
    /// a thread's id to threads created later, and such a thread is not the loop's. And when
    /// nobody is joining the thread (the loop was stopped from its own thread, or its poll
    /// failed for good), it is detached, so that its stack is freed when it ends; a later
    /// ``shutdown()`` then has nothing to wait for.
    private func threadEnded() {
        threadID.store(0, ordering: .releasing)
        let unjoined = thread.withLock { current -> JoinableThread? in
            defer { current = nil }
            return current
        }
        unjoined?.detach()
        let waiters = threadEndWaiters.withLock { waiters in
            defer { waiters = nil }
            return waiters ?? []
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Whether the loop's thread is still to be joined or detached (for tests).
    var threadIsHeld: Bool { thread.withLock { $0 != nil } }

    /// Returns once the loop's thread has taken its last step (for tests).
    func waitForThreadEnd() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let ended = threadEndWaiters.withLock { waiters -> Bool in
                guard waiters != nil else { return true }
                waiters!.append(waiter)
                return false
            }
            if ended { waiter.resume() }
        }
    }

    /// Whether ``shutdown()`` has been called.
    public var isShutDown: Bool { shared.withLock { $0.stopping } }

    func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, MemoryLayout<UInt64>.size)
    }

    func drainWake() {
        var value: UInt64 = 0
        _ = read(wakeFD, &value, MemoryLayout<UInt64>.size)
    }
}

/// Errors of the I/O loop itself.
public enum IOLoopError: Error, Sendable, CustomStringConvertible {
    /// The loop was shut down; the work did not run.
    case shutDown

    /// What happened.
    public var description: String {
        switch self {
        case .shutDown: "the I/O loop has shut down; create a new one to use sockets again"
        }
    }
}
