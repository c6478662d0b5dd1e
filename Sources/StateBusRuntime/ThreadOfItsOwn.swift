import Foundation

/// Runs `body`, which blocks (it waits for a process to exit, a semaphore, a socket), on a
/// new thread, and resumes the caller with its result.
///
/// Swift runs every task on a pool of about one thread per CPU. A task that blocks one of
/// them for seconds holds back every task queued behind it: on a 2-core machine, half of
/// all async work. Blocking calls made from async code go through this instead.
/// - Parameters:
///   - name: the thread's name (for debuggers and `top -H`), if it should have one.
///   - body: the blocking work; sockets it makes are used and closed inside it, on one thread.
package func onThreadOfItsOwn<Value: Sendable, Failure: Error>(
    named name: String? = nil, _ body: @escaping @Sendable () throws(Failure) -> Value
) async throws(Failure) -> Value {
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, Failure>, Never>) in
        let thread = Thread {
            do throws(Failure) {
                continuation.resume(returning: .success(try body()))
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        if let name { thread.name = name }
        thread.start()
    }
    return try result.get()
}
