#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A clock that means the same in every process of the machine, so times taken in two
/// processes can be subtracted (a benchmark's writer and its observer, a test and the
/// `statebus watch` it runs).
public enum MonotonicClock {
    /// `CLOCK_MONOTONIC` in nanoseconds.
    public static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}
