import Dispatch
import StateBusRuntime

extension EtcdClient {
    /// Runs an etcd call from synchronous code and waits for its result, blocking the thread.
    ///
    /// For a dedicated thread outside Swift concurrency, such as a commit thread that must not
    /// acknowledge a write before etcd has it:
    /// ```swift
    /// let result = try EtcdClient.waitBlocking { try await client.txn(fencedWrite) }
    /// ```
    ///
    /// Never call it from a Swift concurrency task (an `async` function, an actor, a
    /// `Task { }`): it blocks a thread of the cooperative pool, which has only as many threads
    /// as cores, and can deadlock it. `body` runs in a new unstructured task.
    /// - Parameter body: the calls to make.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws: ``EtcdError`` when it is declared
    ///   `() async throws(EtcdError) -> T`, any error otherwise.
    public static func waitBlocking<T: Sendable, Failure: Error>(
        _ body: @Sendable @escaping () async throws(Failure) -> T
    ) throws(Failure) -> T {
        let outcome = BlockingOutcome<T, Failure>()
        Task {
            let result: Result<T, Failure>
            do throws(Failure) {
                result = .success(try await body())
            } catch {
                result = .failure(error)
            }
            outcome.finish(result)
        }
        return try outcome.wait().get()
    }
}

/// Hands the result of a task to the thread blocked on it.
private final class BlockingOutcome<T: Sendable, Failure: Error>: Sendable {
    private let result = Locked<Result<T, Failure>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    func finish(_ value: Result<T, Failure>) {
        result.withLock { $0 = value }
        done.signal()
    }

    func wait() -> Result<T, Failure> {
        done.wait()
        return result.withLock { result in
            guard let result else { preconditionFailure("the semaphore was signalled before the result was set") }
            return result
        }
    }
}
