/// How long a view's updates connection has been silent, and what that has led to: the view
/// shown stale, and reconnections for silence in a row.
///
/// Each reconnection for silence doubles the silence tolerated before the next (up to 8
/// times the first), until the view has been live that long. A host that is busy rather
/// than gone (its heartbeats late) is then not sent every write in flight again every few
/// hundred milliseconds, which only kept it busier.
struct UpdatesSilence {
    /// When the updates connection last brought anything (a run, a heartbeat, a marker).
    private(set) var lastHeard = ContinuousClock.now
    /// Whether the view is shown stale while it waits to reconnect.
    private(set) var reportedStale = false
    private var silentReconnects = 0

    /// Something arrived at `now`. - Returns: whether the view had been shown stale (it is
    /// then live again).
    mutating func heard(at now: ContinuousClock.Instant) -> Bool {
        lastHeard = now
        defer { reportedStale = false }
        return reportedStale
    }

    /// How long nothing arrived.
    func silent(at now: ContinuousClock.Instant) -> Duration { now - lastHeard }

    /// The view is shown stale. - Returns: whether it was not before.
    mutating func reportStale() -> Bool {
        defer { reportedStale = true }
        return !reportedStale
    }

    /// A new connection: the stale state is the connection's to show again.
    mutating func newConnection() { reportedStale = false }

    /// The view has been live for `live`: once that is 8 times the silence tolerated, the
    /// reconnections in a row are over.
    mutating func noteLive(for live: Duration, tolerated silence: Duration) {
        if live > silence * 8 { silentReconnects = 0 }
    }

    /// How many times the tolerated silence to wait before reconnecting: 1, then doubling
    /// with reconnections in a row up to 8; always 1 with other hosts to try (the backoff is
    /// for one host that keeps falling silent).
    func patience(withAlternatives: Bool) -> Int {
        withAlternatives ? 1 : 1 << min(silentReconnects, 3)
    }

    /// The view reconnects for silence.
    mutating func reconnecting() { silentReconnects += 1 }
}
