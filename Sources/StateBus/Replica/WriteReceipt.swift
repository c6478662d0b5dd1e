import StateBusRuntime

/// The answer to one write, which arrives later: await ``accepted()`` for the host's verdict.
///
/// The write already shows in the replica when the receipt is returned; if the host rejects
/// it, the replica rolls back and ``accepted()`` throws the host's reason.
public final class WriteReceipt: Sendable {
    /// The write's id, as echoed in the host's update batch.
    public let writeID: UInt64

    private enum State {
        case waiting([CheckedContinuation<UInt64, any Error>])
        case done(Result<UInt64, StateBusError>)
    }
    private let state = Locked(State.waiting([]))

    /// When the write was made, for its round trip.
    let created = ContinuousClock.now

    init(writeID: UInt64) { self.writeID = writeID }

    /// Waits for the host's verdict.
    /// - Returns: the sequence number the host applied the write at.
    /// - Throws: `StateBusError`: the host's rejection (`validationFailed`, `typeMismatch`,
    ///   `readOnly`, `versionConflict`…), or `closed` when the replica closed first.
    public func accepted() async throws -> UInt64 {
        try await withCheckedThrowingContinuation { continuation in
            let done = state.withLock { state -> Result<UInt64, StateBusError>? in
                switch state {
                case .done(let result): return result
                case .waiting(var waiting):
                    waiting.append(continuation)
                    state = .waiting(waiting)
                    return nil
                }
            }
            if let done { continuation.resume(with: done.mapError { $0 as any Error }) }
        }
    }

    /// The verdict, if it has arrived.
    public var result: Result<UInt64, StateBusError>? {
        state.withLock { state in
            if case .done(let result) = state { return result }
            return nil
        }
    }

    func complete(_ result: Result<UInt64, StateBusError>) {
        let waiting = state.withLock { state -> [CheckedContinuation<UInt64, any Error>] in
            guard case .waiting(let waiting) = state else { return [] }
            state = .done(result)
            return waiting
        }
        for continuation in waiting { continuation.resume(with: result.mapError { $0 as any Error }) }
    }
}
