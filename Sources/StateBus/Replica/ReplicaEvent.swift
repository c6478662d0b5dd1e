/// What a replica's own feeds tell those who wait on it, besides the names of changed
/// properties (``ReplicaShared/feed``): the connection, the sequence, the host's answers.
///
/// The observers (``Replica/waitFor(timeout:_:_:)``, ``SequenceChanges``,
/// ``ConnectionStateChanges``) read the replica's state after an event rather than the
/// event, so a case says what happened, not the new state; a feed coalesces repeats of one.
enum ReplicaEvent: Hashable, Sendable {
    /// ``Replica/connectionState`` changed (on ``ReplicaShared/connectionFeed``).
    case connectionChanged
    /// ``Replica/lastError`` changed (on ``ReplicaShared/connectionFeed``).
    case errorChanged
    /// The applied sequence advanced, whether or not a visible value changed (on
    /// ``ReplicaShared/progress``).
    case sequenceAdvanced
    /// The host answered a write, or writes expired unanswered: the pending writes changed
    /// even when no visible value did (on ``ReplicaShared/writeOutcomes``).
    case writesSettled
}
