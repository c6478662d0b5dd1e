/// How long the requests on a control connection (a view's, or a relay's to its upstream)
/// have waited with no reply at all, and when to ping to tell a slow host from a dead
/// connection.
///
/// libzmq drops a connection for good, without reconnecting, when the other side sends a
/// message larger than `ZMQ_MAXMSGSIZE`; asking again on it never helps, and only this
/// silence shows it. A host that is alive but slow to answer (a write waiting for its
/// commit) answers a ping at once, which ends the silence.
struct ControlSilence {
    /// Since when a request waits with no reply (`nil` when every request was answered).
    private var since: ContinuousClock.Instant?
    private var lastPinged = ContinuousClock.now

    /// A request went out (or was tried) at `now`.
    mutating func requestSent(at now: ContinuousClock.Instant) {
        if since == nil { since = now }
    }

    /// A reply came: the connection is alive. Also for a new connection, where nothing waits.
    mutating func reset() { since = nil }

    /// How long a request has waited with no reply, or `nil` when none waits.
    func waited(at now: ContinuousClock.Instant) -> Duration? { since.map { now - $0 } }

    /// Whether to ping now: a request has waited longer than `timeout` and no ping went out
    /// within it.
    func probeDue(at now: ContinuousClock.Instant, timeout: Duration) -> Bool {
        (waited(at: now) ?? .zero) > timeout && now - lastPinged > timeout
    }

    /// A ping went out at `now`.
    mutating func pinged(at now: ContinuousClock.Instant) { lastPinged = now }
}
