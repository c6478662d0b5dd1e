import IdentifiedCollections
import Observation
import StateBus
import Synchronization

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
                Task { @MainActor in
                    try? await Task.sleep(until: deadline)
                    once.resume()
                }
            }
        }
    }
}

/// Resumes a continuation once, whichever of two wake-ups comes first.
private final class OnceResume: Sendable {
    private let continuation: Mutex<CheckedContinuation<Void, Never>?>

    init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = Mutex(continuation) }

    func resume() {
        continuation.withLock { $0.take() }?.resume()
    }
}
