import StateBusRuntime
import StateBusWire

/// The answer to one action call, which arrives later: the caller awaits it once.
final class CallWaiter: Sendable {
    /// What the host answered: the action's result and the object's sequence when it
    /// returned, or why it did not run or failed.
    typealias Outcome = CallOutcome

    private enum State {
        case waiting(CheckedContinuation<Outcome, Never>?)
        case done(Outcome)
    }
    private let state = Locked(State.waiting(nil))

    /// Waits for the outcome (at once when it has arrived).
    func outcome() async -> Outcome {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Outcome? in
                switch state {
                case .done(let outcome): return outcome
                case .waiting:
                    state = .waiting(continuation)
                    return nil
                }
            }
            if let done { continuation.resume(returning: done) }
        }
    }

    /// Sets the outcome; later ones are ignored.
    func complete(_ outcome: Outcome) {
        let waiting = state.withLock { state -> CheckedContinuation<Outcome, Never>?? in
            guard case .waiting(let continuation) = state else { return nil }
            state = .done(outcome)
            return .some(continuation)
        }
        if case .some(.some(let continuation)) = waiting { continuation.resume(returning: outcome) }
    }
}

/// The action calls a replica's engine holds (on its loop thread only): waiting to be sent,
/// or sent and not answered. Sent in call order, behind every write made before them.
struct PendingCalls {
    struct Call {
        let id: UInt64
        let request: FollowerRequest.Call
        let waiter: CallWaiter
        let deadline: ContinuousClock.Instant
        var sent = false
    }

    private(set) var calls: [UInt64: Call] = [:]
    var count: Int { calls.count }

    mutating func add(_ call: Call) { calls[call.id] = call }

    mutating func remove(_ id: UInt64) -> Call? { calls.removeValue(forKey: id) }

    /// The calls not sent yet, in call order.
    var unsent: [Call] { calls.values.filter { !$0.sent }.sorted { $0.id < $1.id } }

    mutating func markSent(_ id: UInt64) { calls[id]?.sent = true }

    /// The calls sent on the connection being replaced.
    mutating func takeSent() -> [Call] {
        let sent = calls.values.filter(\.sent)
        for call in sent { calls[call.id] = nil }
        return sent
    }

    /// The host refused this call as not joined on the connection being replaced: it did
    /// not run, so the next connection sends it again (``takeSent()`` leaves it).
    mutating func refusedUnjoined(_ id: UInt64) { calls[id]?.sent = false }

    /// Removes and returns the calls whose deadline passed.
    mutating func takeExpired(at now: ContinuousClock.Instant) -> [Call] {
        let expired = calls.values.filter { $0.deadline <= now }
        for call in expired { calls[call.id] = nil }
        return expired
    }

    /// Removes and returns every call.
    mutating func takeAll() -> [Call] {
        defer { calls = [:] }
        return Array(calls.values)
    }
}
