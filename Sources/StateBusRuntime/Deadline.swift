/// Runs `body` against a deadline: its result if it finishes within `limit`, `nil` if the
/// limit passes first.
///
/// `body` and a sleep of `limit` race in a task group; whichever ends first ends the wait,
/// and the other is cancelled. The call returns only once both have ended, as structured
/// concurrency requires, so `body` must end when it is cancelled: a plain `for await` on a
/// StateBus stream does, a checked continuation needs a `withTaskCancellationHandler` that
/// resumes it.
///
/// A timeout is `nil` rather than an error, because callers report it in their own words,
/// naming what they waited for and the state they saw:
///
/// ```swift
/// guard let verdict = try await withDeadline(.seconds(5), { try await receipt.accepted() }) else {
///     throw StateBusError(.timeout, "write \(receipt.writeID) got no verdict within 5 seconds")
/// }
/// ```
///
/// - Parameters:
///   - limit: how long `body` may take, on the continuous clock.
///   - body: the work; it runs in a child task of its own, not in the caller's isolation.
/// - Returns: what `body` returned, or `nil` when `limit` passed first. A `body` whose own
///   result is optional keeps its `nil` apart: `.some(nil)` is `body` returning `nil`.
/// - Throws: whatever `body` throws before the deadline. When the calling task is
///   cancelled, both are cancelled and the first to end decides: what `body` then returns
///   or throws, or the sleep's `CancellationError`.
package func withDeadline<Result: Sendable>(
    _ limit: Duration, _ body: @escaping @Sendable () async throws -> Result
) async throws -> Result? {
    try await withThrowingTaskGroup(of: Result?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)  // the deadline itself, not a wait for an event
            return nil
        }
        defer { group.cancelAll() }
        return try await group.next() ?? nil
    }
}
