import StateBusWire

/// The requests a follower of a host (a view, a relay towards its upstream) sends on its
/// control connection: their ids, the hello's, when one last went out, and how long they
/// have waited with no reply at all, to tell a slow host from a dead connection.
///
/// libzmq drops a connection for good, without reconnecting, when the other side sends a
/// message larger than `ZMQ_MAXMSGSIZE`; asking again on it never helps, and only this
/// silence shows it. A host that is alive but slow to answer (a write waiting for its
/// commit) answers a ping at once, which ends the silence.
struct ControlRequests {
    private var nextID: UInt64 = 1
    /// The latest hello's id: its welcome answers it.
    var helloID: UInt64 = 0
    /// When a request last went out (or was tried): an idle client pings so its view id
    /// stays bound.
    private(set) var lastSent = ContinuousClock.now
    /// When the connection last answered anything.
    private(set) var lastAnswered = ContinuousClock.now
    /// Since when a request waits with no reply (`nil` when every request was answered).
    private var unansweredSince: ContinuousClock.Instant?
    private var lastPinged = ContinuousClock.now

    /// The id the next request takes.
    mutating func takeID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    /// Stamps a request as protocol version 2 with the next id, and encodes it.
    /// - Returns: `nil` when it cannot be encoded.
    mutating func encode(_ request: FollowerRequest) -> (bytes: [UInt8], id: UInt64)? {
        let id = takeID()
        guard let bytes = try? request.encoded(version: StateBusProtocol.version2, requestID: id) else { return nil }
        return (bytes, id)
    }

    /// A request went out (or was tried) at `now`.
    mutating func sent(at now: ContinuousClock.Instant) {
        lastSent = now
        if unansweredSince == nil { unansweredSince = now }
    }

    /// A reply came at `now`: the connection is alive.
    mutating func answered(at now: ContinuousClock.Instant) {
        lastAnswered = now
        unansweredSince = nil
    }

    /// A new connection: nothing waits on it.
    mutating func newConnection() { unansweredSince = nil }

    /// How long a request has waited with no reply, or `nil` when none waits.
    func unanswered(at now: ContinuousClock.Instant) -> Duration? { unansweredSince.map { now - $0 } }

    /// Whether to ping now: nothing went out for `idle`, or a request has waited longer than
    /// `timeout` and no ping went out within it.
    func pingDue(at now: ContinuousClock.Instant, idle: Duration, timeout: Duration) -> Bool {
        now - lastSent > idle || ((unanswered(at: now) ?? .zero) > timeout && now - lastPinged > timeout)
    }

    /// A ping went out at `now`.
    mutating func pinged(at now: ContinuousClock.Instant) { lastPinged = now }
}
