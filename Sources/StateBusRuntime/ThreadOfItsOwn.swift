import Foundation

/// Runs `body`, which blocks (it waits for a process to exit, a semaphore, a socket), on a
/// new thread, and resumes the caller with its result.
///
/// Swift runs every task on a pool of about one thread per CPU. A task that blocks one of
/// them for seconds holds back every task queued behind it: on a 2-core machine, half of
/// all async work. Blocking calls made from async code go through this instead.
package func onThreadOfItsOwn<Value: Sendable, Failure: Error>(
    _ body: @escaping @Sendable () throws(Failure) -> Value
) async throws(Failure) -> Value {
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, Failure>, Never>) in
        Thread.detachNewThread {
            do throws(Failure) {
                continuation.resume(returning: .success(try body()))
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
    }
    return try result.get()
}
