import IdentifiedCollections
import Observation
import StateBus
import StateBusRuntime

/// The keyed-collection bench's object as a `@SharedModel` view declares it: the figure of a
/// view whose code reads a Swift `IdentifiedArray`, not a replica's values.
@MainActor @SharedModel("Collection")
final class CollectionModel {
    var items: IdentifiedArrayOf<CollectionBench.Item> = []

    /// Waits until `condition` holds, checked whenever what it reads changes.
    /// - Throws: `BenchError` when `timeout` passes first.
    func waitUntil(_ what: String, timeout: Duration, _ condition: @escaping @MainActor (CollectionModel) -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition(self) {
            guard ContinuousClock.now < deadline else { throw BenchError("timed out waiting for \(what)") }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let once = OnceResume(continuation)
                withObservationTracking {
                    _ = condition(self)
                } onChange: {
                    once.resume()
                }
                // Wakes at the deadline too, when nothing changes any more.
                once.setDeadline(
                    Task { @MainActor in
                        try? await Task.sleep(until: deadline)
                        once.resume()
                    })
            }
        }
    }
}

/// Resumes a continuation once, whichever of two wake-ups comes first, and cancels the
/// deadline's task then.
private final class OnceResume: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, Never>?
        var deadline: Task<Void, Never>?
    }
    private let state: Locked<State>

    init(_ continuation: CheckedContinuation<Void, Never>) { state = Locked(State(continuation: continuation)) }

    /// Sets the task that resumes at the deadline; it is cancelled when something else
    /// resumes first (at once, when that already happened).
    func setDeadline(_ task: Task<Void, Never>) {
        let resumed = state.withLock { state -> Bool in
            state.deadline = task
            return state.continuation == nil
        }
        if resumed { task.cancel() }
    }

    func resume() {
        let (continuation, deadline) = state.withLock { state in (state.continuation.take(), state.deadline.take()) }
        deadline?.cancel()
        continuation?.resume()
    }
}
