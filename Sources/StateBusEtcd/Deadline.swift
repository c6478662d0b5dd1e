// Bounding an async call in time. Each request has its own timeout, but an election must
// give up at its lease's end whatever its calls (several requests, retries) are doing; so the
// call races a timer, and the loser is cancelled.

/// Runs `body`, giving up at `deadline`: the body's task is then cancelled (an HTTP request
/// in it is closed) and the result is nil.
/// - Throws: what `body` throws; `CancellationError` when the calling task is cancelled.
func withDeadline<T: Sendable>(
    until deadline: ContinuousClock.Instant, _ body: @escaping @Sendable () async throws -> T
) async throws -> T? {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(until: deadline, clock: .continuous)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { return nil }
        return first
    }
}

/// Runs `body`, giving up after `timeout`; see ``withDeadline(until:_:)``.
func withDeadline<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T? {
    try await withDeadline(until: .now + timeout, body)
}
