/// What a relay tells those who wait on it (``RelayCounters/events``), for
/// ``StateRelay/waitFor(timeout:_:_:)``, which reads the relay's state after an event rather
/// than the event.
enum RelayEvent: Hashable, Sendable {
    /// The relay recorded whether every relayed object's copy is current
    /// (``StateRelay/isSynced``), whether or not that changed.
    case syncRecorded
    /// The relay joined its upstream again (``RelayStatistics/upstreamReconnects``).
    case upstreamJoined
}
