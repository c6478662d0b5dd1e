#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value behind a lock: the `withLock` shape of `Synchronization.Mutex`, on a
/// `pthread_mutex_t`, with a condition to wait on for a change of the value
/// (``withLock(waitingUpTo:until:_:)`` and ``signalAll()``).
///
/// On Linux `Mutex` waits on futexes that ThreadSanitizer cannot see, so every access it
/// guards looks like a race and a TSan run cannot tell a real one; ThreadSanitizer
/// intercepts `pthread_mutex_lock` and `pthread_mutex_unlock`, and sees this lock's
/// ordering. Uncontended, both cost a few nanoseconds.
///
/// ```swift
/// let count = Locked(0)
/// count.withLock { $0 += 1 }
/// ```
public final class Locked<Value>: @unchecked Sendable {
    // Sendable: `value` is read and written only inside `withLock`, between
    // `pthread_mutex_lock` and `pthread_mutex_unlock` on `mutex` (a wait on `condition`
    // releases and takes it again inside `pthread_cond_timedwait`), so no two threads touch
    // it at once; `withLock` takes and returns `sending` values, as `Mutex` does, so a
    // non-Sendable value cannot be shared out of the lock.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Signalled by ``signalAll()``; its waits time out on `CLOCK_MONOTONIC`.
    @usableFromInline let condition: UnsafeMutablePointer<pthread_cond_t>
    @usableFromInline var value: Value

    /// A lock holding `value`.
    public init(_ value: sending Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        // Error-checking: a second `withLock` of the same lock on one thread gets EDEADLK,
        // which traps below, as `Mutex` traps, instead of hanging the thread for ever.
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var conditionAttributes = pthread_condattr_t()
        pthread_condattr_init(&conditionAttributes)
        #if canImport(Glibc)
            // The monotonic clock: a change of the wall clock must not stretch or cut a wait.
            // (Darwin has no such attribute; its waits are relative, see `wait(until:)`.)
            pthread_condattr_setclock(&conditionAttributes, CLOCK_MONOTONIC)
        #endif
        pthread_cond_init(condition, &conditionAttributes)
        pthread_condattr_destroy(&conditionAttributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, holding the lock; other threads wait until it returns.
    /// Not reentrant: calling `withLock` of the same lock inside `body` traps.
    @inlinable
    public func withLock<Result, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        let locked = pthread_mutex_lock(mutex)
        precondition(locked == 0, "Locked.withLock inside withLock of the same lock on one thread (it is not reentrant): error \(locked)")
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// Runs `body` with the value, holding the lock, once `isReady` holds for it: until
    /// then the thread waits, the lock released, for a ``signalAll()``, and at most `timeout`.
    ///
    /// Whoever changes the value in a way that can make `isReady` hold calls ``signalAll()``
    /// after that change (inside or after its own `withLock`); the predicate is checked
    /// under the lock before every wait, so no signal is missed.
    /// - Parameters:
    ///   - timeout: the longest wait, on the monotonic clock.
    ///   - isReady: what the caller waits for; checked under the lock.
    ///   - body: gets the value and whether `isReady` held (`false`: the time ran out).
    @inlinable
    public func withLock<Result, Failure: Error>(
        waitingUpTo timeout: Duration, until isReady: (inout Value) -> Bool,
        _ body: (inout sending Value, _ ready: Bool) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        let locked = pthread_mutex_lock(mutex)
        precondition(locked == 0, "Locked.withLock inside withLock of the same lock on one thread (it is not reentrant): error \(locked)")
        defer { pthread_mutex_unlock(mutex) }
        var ready = isReady(&value)
        if !ready {
            let deadline = Self.monotonicNanoseconds() &+ Self.nanoseconds(of: timeout)
            while !ready {
                let waited = wait(until: deadline)
                ready = isReady(&value)
                if waited == ETIMEDOUT { break }
            }
        }
        return try body(&value, ready)
    }

    /// Wakes every thread waiting in ``withLock(waitingUpTo:until:_:)`` to check its
    /// condition again. Costs no system call when none waits.
    public func signalAll() {
        pthread_cond_broadcast(condition)
    }

    /// Waits on the condition, the lock released meanwhile, until a signal or until the
    /// monotonic clock reads `deadline` (nanoseconds).
    /// - Returns: `ETIMEDOUT` once the deadline passed, else 0 (a signal, or a spurious wake-up).
    @usableFromInline
    func wait(until deadline: UInt64) -> Int32 {
        #if canImport(Glibc)
            let absolute = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
            return withUnsafePointer(to: absolute) { pthread_cond_timedwait(condition, mutex, $0) }
        #else
            let now = Self.monotonicNanoseconds()
            guard deadline > now else { return ETIMEDOUT }
            var relative = timespec(tv_sec: Int((deadline - now) / 1_000_000_000), tv_nsec: Int((deadline - now) % 1_000_000_000))
            return pthread_cond_timedwait_relative_np(condition, mutex, &relative)
        #endif
    }

    /// `CLOCK_MONOTONIC` in nanoseconds.
    @usableFromInline
    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// A duration in nanoseconds, negative ones as 0 and at most about a hundred years, so
    /// that a deadline far off (`.seconds(.max)`, meaning "wait as long as it takes") cannot
    /// overflow.
    @usableFromInline
    static func nanoseconds(of duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let limit: Int64 = 3_000_000_000
        return UInt64(min(seconds, limit)) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }
}
