import Foundation

/// A clock that means the same in every process, so the bench and its workers (and a test
/// and the `watch` or `load` it runs) can compare times they took separately.
enum BenchClock {
    /// `CLOCK_MONOTONIC` in nanoseconds: one clock for the whole machine, so a time taken in
    /// the bench process and one taken in a worker can be subtracted.
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}
