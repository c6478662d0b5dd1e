import Dispatch
import StateBusRuntime

/// Something that happens once (a child exited, its output ended), which threads wait for
/// with a deadline: each waiter sleeps on a semaphore of its own that ``fire()`` signals, so
/// nobody polls.
///
/// Used by the waits that cannot suspend: the synchronous stops tests make in a `defer`,
/// and the threads that watch a child. Async code waits with
/// ``NodeProcess/exitStatus()`` or ``NodeProcess/waitForLine(_:after:timeout:where:)``.
final class OneTimeEvent: Sendable {
    private struct State {
        var fired = false
        var waiters: [DispatchSemaphore] = []
    }
    private let state = Locked(State())

    /// Whether it has happened.
    var hasFired: Bool { state.withLock { $0.fired } }

    /// Marks it as happened and wakes every waiter. Later calls do nothing.
    func fire() {
        let waiters = state.withLock { state -> [DispatchSemaphore] in
            guard !state.fired else { return [] }
            state.fired = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.signal() }
    }

    /// Blocks the calling thread until it happens or `timeout` passes.
    /// - Returns: whether it happened.
    @discardableResult
    func wait(upTo timeout: Duration) -> Bool {
        let semaphore = DispatchSemaphore(value: 0)
        let fired = state.withLock { state -> Bool in
            if state.fired { return true }
            state.waiters.append(semaphore)
            return false
        }
        if fired { return true }
        let nanoseconds = Int(clamping: timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)
        if semaphore.wait(timeout: .now() + .nanoseconds(max(0, nanoseconds))) == .success { return true }
        // Timed out; `fire()` may have run since, so the answer is whatever it is now.
        return state.withLock { state in
            state.waiters.removeAll { $0 === semaphore }
            return state.fired
        }
    }
}
