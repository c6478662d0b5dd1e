import Foundation

/// Runs blocking libzmq code (the raw baselines) on a thread of its own, never on the
/// cooperative pool, and hands its result back to async code. The sockets are made, used
/// and closed inside `body`, so each stays on one thread.
enum BlockingThread {
    /// Runs `body` on a new thread and waits for it without blocking the caller's thread.
    /// - Parameters:
    ///   - name: the thread's name (for debuggers and `top -H`).
    ///   - body: the blocking work.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    static func run<Result: Sendable>(_ name: String, _ body: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                do {
                    continuation.resume(returning: try body())
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.name = name
            thread.start()
        }
    }
}
