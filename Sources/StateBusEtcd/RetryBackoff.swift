/// The pause between retries against an etcd that does not answer: it doubles from 25 ms up to
/// 250 ms, with jitter so that candidates do not retry in lockstep. Kept short because a
/// standby that waits longer than that adds its wait to the failover time.
struct RetryBackoff {
    /// The shortest pause.
    static let first = Duration.milliseconds(25)
    /// The longest pause.
    static let longest = Duration.milliseconds(250)

    private var next = first

    /// Sleeps for the current pause (between half of it and all of it), then lengthens it.
    /// Returns early when the task is cancelled.
    mutating func pause() async {
        let jittered = next * Double.random(in: 0.5...1.0)
        next = min(next * 2, Self.longest)
        try? await Task.sleep(for: jittered)
    }

    /// Starts again from the shortest pause, after a success.
    mutating func reset() { next = Self.first }
}
