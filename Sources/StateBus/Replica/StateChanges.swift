/// A replica's changes of one kind of state other than property values, coalesced: each
/// element is the state's value when the element is taken, after one or more changes.
/// Ends when the replica closes.
///
/// ``Replica/sequenceChanges`` (``SequenceChanges``) and ``Replica/connectionChanges``
/// (``ConnectionStateChanges``) are the two kinds; ``PropertyChanges`` carries the names of
/// changed properties. Like ``PropertyChanges``, a slow observer gets the latest state, never
/// a backlog, and observing stops when the iterator is dropped.
public struct StateChanges<Element: Sendable>: AsyncSequence, Sendable {
    let feed: ChangeFeed<ReplicaEvent>
    let read: @Sendable () -> Element

    /// Starts observing; changes made before this call are not reported.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: ChangeFeed.Registration(feed: feed), read: read)
    }

    /// Awaits the next change.
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        let base: ChangeFeed<ReplicaEvent>.Registration
        let read: @Sendable () -> Element

        /// The state after the changes since the last call, or `nil` at the end.
        public mutating func next() async -> Element? {
            guard await base.next() != nil else { return nil }
            return read()
        }
    }
}

/// The replica's ``Replica/sequence`` after update batches or a snapshot were applied.
public typealias SequenceChanges = StateChanges<UInt64>
