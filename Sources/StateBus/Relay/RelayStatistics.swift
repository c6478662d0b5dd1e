import Synchronization

/// What a relay has done so far.
public struct RelayStatistics: Sendable, Equatable, CustomStringConvertible {
    /// Publications received from upstream and relayed to views, unchanged.
    public let relayedPublications: Int
    /// Writes forwarded upstream.
    public let forwardedWrites: Int
    /// Answers to forwarded writes passed back to their views.
    public let answeredWrites: Int
    /// Forwarded writes whose answer never came within ``RelayConfiguration/forwardedWriteTimeout``.
    public let expiredWrites: Int
    /// Snapshots served to views from the relay's copy.
    public let servedSnapshots: Int
    /// Snapshots the relay took from upstream (its first join, gaps, upstream restarts).
    public let upstreamSnapshots: Int
    /// Times the relay joined its upstream again (a new epoch, silence, a lost connection).
    public let upstreamReconnects: Int
    /// Requests from views that could not be read or were refused for their form.
    public let badMessages: Int
    /// Hellos and snapshot requests answered with an error after waiting past their bound.
    public let expiredRequests: Int
    /// Action calls forwarded upstream.
    public let forwardedCalls: Int
    /// Requests refused because the view's key may not make them (a relay with keys).
    public let forbiddenRequests: Int

    /// One line, for logs.
    public var description: String {
        "relayed \(relayedPublications) publications, forwarded \(forwardedWrites) writes (\(answeredWrites) answered, \(expiredWrites) expired) and \(forwardedCalls) calls, "
            + "served \(servedSnapshots) snapshots, took \(upstreamSnapshots) from upstream, reconnected upstream \(upstreamReconnects) times, "
            + "\(badMessages) bad messages, \(forbiddenRequests) forbidden requests, \(expiredRequests) expired requests"
    }
}

/// The counters behind ``RelayStatistics``, written on the relay's loop and read anywhere.
final class RelayCounters: Sendable {
    let relayedPublications = MetricCounter("statebus_relay_publications_total")
    let forwardedWrites = MetricCounter("statebus_relay_forwarded_writes_total")
    let answeredWrites = MetricCounter("statebus_relay_answered_writes_total")
    let expiredWrites = MetricCounter("statebus_relay_expired_writes_total")
    let servedSnapshots = MetricCounter("statebus_relay_snapshots_served_total")
    let upstreamSnapshots = MetricCounter("statebus_relay_upstream_snapshots_total")
    let upstreamReconnects = MetricCounter("statebus_relay_upstream_reconnects_total")
    let badMessages = MetricCounter("statebus_relay_bad_messages_total")
    let forbiddenRequests = MetricCounter("statebus_relay_forbidden_requests_total")
    let expiredRequests = MetricCounter("statebus_relay_expired_requests_total")
    let forwardedCalls = MetricCounter("statebus_relay_forwarded_calls_total")
    /// Message bodies libzmq refused after taking their first frame (it should not): lost,
    /// so counted and logged rather than dropped silently.
    let droppedMessages = MetricCounter("statebus_relay_dropped_messages_total")
    /// Whether every relayed object's copy holds the upstream's current state (set with
    /// ``setSynced(_:)``).
    let synced = Atomic<Bool>(false)
    /// Told when ``synced`` is set and when the relay joins its upstream again, for those who
    /// wait on them (``StateRelay/waitFor(timeout:_:_:)``).
    let events = ChangeFeed<RelayEvent>()

    /// Records whether every copy is current, and tells those who wait.
    func setSynced(_ value: Bool) {
        synced.store(value, ordering: .relaxed)
        events.notify([.syncRecorded])
    }

    /// Counts a new join of the upstream, and tells those who wait.
    func countUpstreamReconnect() {
        upstreamReconnects.add(1, ordering: .relaxed)
        events.notify([.upstreamJoined])
    }

    var snapshot: RelayStatistics {
        RelayStatistics(
            relayedPublications: relayedPublications.load(ordering: .relaxed),
            forwardedWrites: forwardedWrites.load(ordering: .relaxed),
            answeredWrites: answeredWrites.load(ordering: .relaxed),
            expiredWrites: expiredWrites.load(ordering: .relaxed),
            servedSnapshots: servedSnapshots.load(ordering: .relaxed),
            upstreamSnapshots: upstreamSnapshots.load(ordering: .relaxed),
            upstreamReconnects: upstreamReconnects.load(ordering: .relaxed),
            badMessages: badMessages.load(ordering: .relaxed),
            expiredRequests: expiredRequests.load(ordering: .relaxed),
            forwardedCalls: forwardedCalls.load(ordering: .relaxed),
            forbiddenRequests: forbiddenRequests.load(ordering: .relaxed))
    }
}
