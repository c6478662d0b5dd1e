import Foundation

/// The lines a ``NodeProcess`` printed, and the tasks waiting for a line that satisfies a
/// predicate.
///
/// A plain state value: the process changes it under its lock, and runs predicates and
/// resumes continuations outside it, since a predicate may use the process (its pid, its
/// output) and a resumed task may call straight back in.
struct LineWaiters: Sendable {
    /// The test a waiter applies to each line.
    typealias Predicate = @Sendable (String) -> Bool

    /// One task waiting for a line: resumed with the line, or with `nil` when its wait is
    /// cancelled (at its deadline, or with the task that waits).
    struct Waiter: Sendable {
        let predicate: Predicate
        let continuation: CheckedContinuation<String?, Never>
    }

    /// Every line printed so far, standard output and error, all runs.
    private(set) var printed: [String] = []
    /// Where the current run's lines begin: a wait never matches a line of an earlier run.
    private var runStart = 0
    private var waiters: [UUID: Waiter] = [:]

    /// A new run starts: lines printed so far belong to earlier runs.
    mutating func beginRun() { runStart = printed.count }

    /// Records a line.
    /// - Returns: every waiter, whose predicates the caller runs on the line outside the lock.
    mutating func append(_ line: String) -> [UUID: Waiter] {
        printed.append(line)
        return waiters
    }

    /// Registers a waiter.
    /// - Parameter lineIndex: only lines from this index on count (and none of an earlier run).
    /// - Returns: the lines already printed that it may match; the caller checks them
    ///   outside the lock, so a line arriving in between is seen by one of the two.
    mutating func register(_ id: UUID, _ waiter: Waiter, after lineIndex: Int?) -> ArraySlice<String> {
        waiters[id] = waiter
        let start = min(printed.count, max(runStart, lineIndex ?? 0))
        return printed[start...]
    }

    /// Removes a waiter, if it is still waiting: whoever removes it resumes it, exactly once.
    mutating func remove(_ id: UUID) -> Waiter? { waiters.removeValue(forKey: id) }

    /// Removes the waiters whose predicates matched.
    /// - Returns: the continuations of those still waiting, to resume outside the lock.
    mutating func remove(_ ids: [UUID]) -> [CheckedContinuation<String?, Never>] {
        ids.compactMap { waiters.removeValue(forKey: $0)?.continuation }
    }
}
