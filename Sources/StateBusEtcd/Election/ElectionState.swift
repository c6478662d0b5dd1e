/// The shared state of a ``LeaderElection``, changed only under its lock: the campaign's
/// phase, the current term with its validity, the lease to revoke on resignation, and the
/// subscribers to events. Each change is one method, so that the rules live in one place.
struct ElectionState {
    /// Where the election is in its life.
    enum Phase {
        /// Created; ``LeaderElection/start()`` not called yet.
        case idle
        /// Campaigning, leading or following.
        case running
        /// ``LeaderElection/resign()`` was called; nothing starts again.
        case resigned
    }

    /// The term held now, and the instant until which it is safe to act on it.
    struct Term {
        var leadership: LeaderElection.Leadership
        var validUntil: ContinuousClock.Instant
    }

    private(set) var phase = Phase.idle
    private(set) var term: Term?
    /// The lease of the current campaign or term, revoked on resignation.
    var lease: Int64?
    private(set) var task: Task<Void, Never>?
    private var lastEvent: LeaderElection.Event?
    private var subscribers: [Int: AsyncStream<LeaderElection.Event>.Continuation] = [:]
    private var nextSubscriber = 0

    /// The term when it is still valid at `now`.
    func validTerm(at now: ContinuousClock.Instant) -> Term? {
        guard let term, now < term.validUntil else { return nil }
        return term
    }

    /// Moves from idle to running with the campaign's task. Returns false when not idle.
    mutating func start(_ makeTask: () -> Task<Void, Never>) -> Bool {
        guard phase == .idle else { return false }
        phase = .running
        task = makeTask()
        return true
    }

    /// Records a won term and reports it. Returns false, recording nothing, after
    /// resignation or when the term is already past its validity.
    mutating func beginTerm(_ leadership: LeaderElection.Leadership, validUntil: ContinuousClock.Instant, now: ContinuousClock.Instant) -> Bool {
        guard phase == .running, now < validUntil else { return false }
        term = Term(leadership: leadership, validUntil: validUntil)
        emit(.leading(leadership))
        return true
    }

    /// Extends the term's validity after a renewal; it never moves back.
    mutating func renew(validUntil: ContinuousClock.Instant) {
        guard var current = term else { return }
        current.validUntil = max(current.validUntil, validUntil)
        term = current
    }

    /// Ends the term, if any, and reports why. Returns false when there was none.
    @discardableResult
    mutating func endTerm(reason: String) -> Bool {
        guard term != nil else { return false }
        term = nil
        emit(.steppedDown(reason: reason))
        return true
    }

    /// Reports the leader seen, unless it is the one reported last.
    mutating func follow(leader: [UInt8]?, revision: Int64) {
        let event = LeaderElection.Event.following(leader: leader, revision: revision)
        guard phase == .running, lastEvent != event else { return }
        emit(event)
    }

    /// Moves to resigned and returns the campaign's task to cancel and await.
    mutating func resign() -> Task<Void, Never>? {
        phase = .resigned
        let running = task
        task = nil
        return running
    }

    /// Removes every subscriber, after resignation, and returns their streams to finish.
    /// They must be finished outside the lock: finishing runs a stream's termination
    /// handler, which takes the lock to unsubscribe.
    mutating func takeSubscribers() -> [AsyncStream<LeaderElection.Event>.Continuation] {
        defer { subscribers = [:] }
        return Array(subscribers.values)
    }

    /// Adds a subscriber, which first gets the current role (leading or following) if known.
    /// Returns nil after resignation: the caller then finishes the stream.
    mutating func subscribe(_ continuation: AsyncStream<LeaderElection.Event>.Continuation) -> Int? {
        guard phase != .resigned else { return nil }
        switch lastEvent {
        case .leading, .following: if let lastEvent { continuation.yield(lastEvent) }
        case .steppedDown, nil: break
        }
        nextSubscriber += 1
        subscribers[nextSubscriber] = continuation
        return nextSubscriber
    }

    /// Removes a subscriber whose stream ended.
    mutating func unsubscribe(_ id: Int) {
        subscribers[id] = nil
    }

    /// Sends an event to every subscriber. Yielding only enqueues (the consumer runs on its
    /// own task), so it is done under the lock, which keeps every stream in one order.
    private mutating func emit(_ event: LeaderElection.Event) {
        lastEvent = event
        for continuation in subscribers.values { continuation.yield(event) }
    }
}
