import StateBusRuntime

extension StateHost {
    /// Applies several changes to one object as one batch, like ``apply(_:to:)``, and returns
    /// only once the persisted properties they touch are durable (committed with
    /// `synchronous=FULL`) and the batch is published: the host-side counterpart of a view's
    /// acknowledged write.
    ///
    /// ``apply(_:to:)`` and ``update(_:to:at:in:)`` return as soon as the change is applied (a
    /// model's property setter cannot wait); their persisted values are committed by the next
    /// group commit, a loop turn later. Use this method when the caller must know.
    /// - Returns: the batch's sequence number.
    /// - Throws: `StateBusError`: what ``apply(_:to:)`` throws (nothing applied then);
    ///   `persistenceFailed` when the commit failed (the persisted properties were set back
    ///   to their stored values); `closed` when the host stopped before confirming.
    @discardableResult
    public func applyDurably(_ changes: [PropertyChange], to object: String) async throws(StateBusError) -> UInt64 {
        let outcome = DurabilityOutcome()
        let applied = try state.apply(changes, to: object, fromView: nil, writeID: 0, whenDurable: outcome.record, roomWait: roomWait)
        // The batch is queued with its waiter: the publication this schedules (or one already
        // scheduled) holds it for its group commit and answers the waiter when that is done,
        // or at the host's stop.
        let engine = self.engine
        if !loop.execute({ _ in engine.value.publishPending() }) {
            outcome.record(
                StateBusError(.closed, "the host stopped before it could confirm that the change to '\(object)' is durable", object: object))
        }
        if let error = await outcome.result() { throw error }
        return applied.sequence
    }

    /// Updates a property like ``update(_:to:at:in:)`` and returns once it is durable and published.
    /// - Returns: the batch's sequence number.
    /// - Throws: as ``applyDurably(_:to:)``.
    @discardableResult
    public func updateDurably(_ property: String, to value: Value, at path: ValuePath = .root, in object: String) async throws(StateBusError)
        -> UInt64
    {
        try await applyDurably([PropertyChange(property, at: path, to: value)], to: object)
    }

    /// Fault injection for tests: the database may not grow any more, so the next commit that
    /// needs a new page fails with SQLite's `SQLITE_FULL`, exactly as on a full disk.
    @_spi(Testing)
    public func fillDiskForTesting() async throws {
        let engine = self.engine
        try await loop.submit { _ in try engine.value.persistence?.writer.forbidGrowthForTesting() }
    }
}

/// The outcome of one batch's group commit: set once on the loop thread, awaited by the
/// writer.
private final class DurabilityOutcome: Sendable {
    private enum State {
        case waiting(CheckedContinuation<StateBusError?, Never>?)
        case answered(StateBusError?)
    }

    private let state = Locked<State>(.waiting(nil))

    /// Records the outcome (`nil`: durable); later calls are ignored.
    var record: SourceOfTruth.DurabilityWaiter {
        { [self] error in
            let waiting = state.withLock { state -> CheckedContinuation<StateBusError?, Never>? in
                guard case .waiting(let continuation) = state else { return nil }
                state = .answered(error)
                return continuation
            }
            waiting?.resume(returning: error)
        }
    }

    /// Waits for the outcome.
    func result() async -> StateBusError? {
        await withCheckedContinuation { continuation in
            let answered = state.withLock { state -> StateBusError?? in
                switch state {
                case .answered(let error): return .some(error)
                case .waiting:
                    state = .waiting(continuation)
                    return nil
                }
            }
            if let answered { continuation.resume(returning: answered) }
        }
    }
}
