import Foundation

/// Blocks the calling thread until `condition` holds or `timeout` passes, checking it every
/// `interval`.
///
/// Only for the waits that cannot suspend: a process's termination handler, `deinit`, and
/// the synchronous stop and kill calls that tests make in a `defer`. Async code waits with
/// ``NodeProcess/exitStatus()`` or ``NodeProcess/waitForLine(_:after:timeout:where:)``.
/// - Returns: whether `condition` held before the deadline.
@discardableResult
func blockingPoll(upTo timeout: Duration, every interval: Duration, until condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    let pause = useconds_t(interval / .microseconds(1))
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        usleep(pause)
    }
    return true
}
