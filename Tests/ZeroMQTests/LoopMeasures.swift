import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

// What the loop tests measure: the CPU a loop's thread used.

/// The CPU time `loop`'s thread used during `window` (read on that thread, before and after).
func cpuUsed(by loop: IOLoop, over window: Duration) async throws -> Duration {
    let before = try await loop.submit { _ in threadCPUTime() }
    try await Task.sleep(for: window)  // the window measured, not a wait for an event
    let after = try await loop.submit { _ in threadCPUTime() }
    return after - before
}

/// The CPU time `loop`'s thread used from now until it reached `amount`, or until `limit`
/// passed. A loop that polls busily gets there however busy the machine is, only later; a
/// loop that sleeps never does. So a test can tell the two apart without timing a window a
/// loaded machine may spend elsewhere. The looks read the loop thread's CPU clock from here:
/// a look that woke the loop would cost it CPU of its own.
func cpuUsed(by loop: IOLoop, reaching amount: Duration, within limit: Duration) async throws -> Duration {
    let clock = try await loop.submit { _ in
        var id = clockid_t()
        pthread_getcpuclockid(pthread_self(), &id)
        return id
    }
    let before = cpuTime(on: clock)
    let deadline = ContinuousClock.now + limit
    while true {
        try await Task.sleep(for: .milliseconds(20))  // the pace of the looks, not a wait for an event
        let used = cpuTime(on: clock) - before
        if used >= amount || ContinuousClock.now >= deadline { return used }
    }
}

/// The calling thread's CPU time.
func threadCPUTime() -> Duration { cpuTime(on: CLOCK_THREAD_CPUTIME_ID) }

/// The time of a CPU clock: the calling thread's, or another thread's of this process.
func cpuTime(on clock: clockid_t) -> Duration {
    var spec = timespec()
    clock_gettime(clock, &spec)
    return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
}
