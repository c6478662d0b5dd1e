import Foundation
import StateBusRuntime

extension NodeProcess {
    /// Every line printed so far (standard output and error, all runs).
    public var output: [String] { state.withLock { $0.lines.printed } }

    /// The number of lines printed so far: pass it as `after` to wait only for later lines.
    public var lineCount: Int { state.withLock { $0.lines.printed.count } }

    /// Waits for a line printed by the current run that satisfies `predicate` (lines
    /// already printed count too, unless `after` skips them).
    /// - Parameters:
    ///   - description: what is awaited, for the timeout error.
    ///   - lineIndex: only lines from this index on (see ``lineCount``) count.
    ///   - timeout: the deadline.
    ///   - predicate: the test for a line.
    /// - Returns: the first matching line.
    /// - Throws: ``WaitTimeout`` naming what was awaited and showing the last lines.
    @discardableResult
    public func waitForLine(
        _ description: String, after lineIndex: Int? = nil, timeout: Duration = .seconds(120), where predicate: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
        let id = UUID()
        // A cancelled wait (at the deadline, or the caller's task) ends as a timeout.
        let line = (try? await withDeadline(timeout) { [self] in await nextLine(id, after: lineIndex, where: predicate) }) ?? nil
        guard let line else { throw timedOut(waitingFor: "\(name): \(description)", after: timeout) }
        return line
    }

    /// The first line from `lineIndex` on that satisfies `predicate`, waiting for it under
    /// `id` as long as it takes.
    /// - Returns: the line, or `nil` once the task is cancelled.
    private func nextLine(_ id: UUID, after lineIndex: Int?, where predicate: @escaping LineWaiters.Predicate) async -> String? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let waiter = LineWaiters.Waiter(predicate: predicate, continuation: continuation)
                let existing = state.withLock { $0.lines.register(id, waiter, after: lineIndex) }
                // An exited process may be started again (by a launcher's respawn, or the
                // test), so a wait lasts until its deadline, not until the output ends.
                if let line = existing.first(where: predicate), let waiter = state.withLock({ $0.lines.remove(id) }) {
                    waiter.continuation.resume(returning: line)
                } else if Task.isCancelled, let waiter = state.withLock({ $0.lines.remove(id) }) {
                    // Cancelled before it was registered, so the handler found nothing to end.
                    waiter.continuation.resume(returning: nil)
                }
            }
        } onCancel: {
            // Whoever removes the waiter resumes it: a matching line may have come first.
            state.withLock { $0.lines.remove(id) }?.continuation.resume(returning: nil)
        }
    }

    /// A timeout report showing this process's last lines.
    func timedOut(waitingFor what: String, after timeout: Duration) -> WaitTimeout {
        WaitTimeout(what: what, timeout: timeout, lastSeen: output.suffix(15).joined(separator: "\n"))
    }

    /// Reads run `run`'s output, line by line, on a thread of its own: the reads block, so
    /// they stay off the cooperative pool.
    func readLines(from handle: FileHandle, run: Int, end: OneTimeEvent) {
        Thread.detachNewThread { [self] in
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    received(line)
                }
            }
            if !buffer.isEmpty { received(String(decoding: buffer, as: UTF8.self)) }
            end.fire()
        }
    }

    private func received(_ line: String) {
        onLine?(line)
        // Predicates run outside the lock: they may use this process (its pid, its output).
        let waiters = state.withLock { $0.lines.append(line) }
        let matched = waiters.filter { $0.value.predicate(line) }.map(\.key)
        guard !matched.isEmpty else { return }
        let continuations = state.withLock { $0.lines.remove(matched) }
        for continuation in continuations { continuation.resume(returning: line) }
    }
}
