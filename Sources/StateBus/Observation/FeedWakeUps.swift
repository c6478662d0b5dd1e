/// An observation of a feed that tells only that something happened, not what: for a wait
/// that checks its condition again after any event, and may watch feeds of different kinds
/// of event at once (``Replica/waitFor(timeout:_:_:)`` watches property names and
/// ``ReplicaEvent``s).
///
/// Observing stops when the last copy is dropped, or when the feed finishes.
struct FeedWakeUps: Sendable {
    private let nextEvents: @Sendable () async -> Bool

    /// Starts observing `feed`; events before this call are not reported.
    init<Event>(_ feed: ChangeFeed<Event>) {
        let registration = ChangeFeed.Registration(feed: feed)
        nextEvents = { await registration.next() != nil }
    }

    /// Waits until something happens, coalesced with whatever else happened since the last call.
    /// - Returns: `false` once the feed finished or the task was cancelled.
    func next() async -> Bool { await nextEvents() }
}
