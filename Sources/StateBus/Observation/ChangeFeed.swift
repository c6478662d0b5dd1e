import StateBusRuntime
import Synchronization

/// Tells any number of observers which events happened, coalescing bursts: a slow observer
/// gets the set of distinct events since it last looked, never a backlog.
///
/// A feed of property names (`ChangeFeed<String>`) tells which properties changed; a feed of
/// a small enum (``ReplicaEvent``, ``RelayEvent``) tells what else happened. Memory per
/// observer is bounded by the number of distinct events (the properties, or the enum's
/// cases), whatever the rate at which they happen.
final class ChangeFeed<Event: Hashable & Sendable>: Sendable {
    final class Subscriber: Sendable {
        struct State {
            var pending: Set<Event> = []
            var waiting: CheckedContinuation<Set<Event>?, Never>?
            var finished = false
        }
        let state = Locked(State())

        func notify(_ events: Set<Event>) {
            let resume = state.withLock { state -> (CheckedContinuation<Set<Event>?, Never>, Set<Event>)? in
                if state.finished { return nil }
                // An observer that has seen everything takes the set whole (shared, not copied):
                // a snapshot of 100,000 names is not hashed again per observer.
                if state.pending.isEmpty { state.pending = events } else { state.pending.formUnion(events) }
                guard let waiting = state.waiting, !state.pending.isEmpty else { return nil }
                state.waiting = nil
                defer { state.pending = [] }
                return (waiting, state.pending)
            }
            if let (continuation, events) = resume { continuation.resume(returning: events) }
        }

        func finish() {
            let waiting = state.withLock { state in
                state.finished = true
                defer { state.waiting = nil }
                return state.waiting
            }
            waiting?.resume(returning: nil)
        }

        func next() async -> Set<Event>? {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Set<Event>?, Never>) in
                    let immediate = state.withLock { state -> Set<Event>?? in
                        if !state.pending.isEmpty {
                            defer { state.pending = [] }
                            return .some(state.pending)
                        }
                        if state.finished || Task.isCancelled { return .some(nil) }
                        state.waiting = continuation
                        return .none
                    }
                    if let immediate { continuation.resume(returning: immediate) }
                }
            } onCancel: {
                finish()
            }
        }
    }

    private let subscribers = Locked<[ObjectIdentifier: Subscriber]>([:])
    private let closed = Locked(false)
    /// How many observe, read without the lock: a publisher checks it before it builds the
    /// set of events (a replica nobody observes by name never builds a set of names).
    private let observers = Atomic<Int>(0)

    /// Whether anyone observes the feed (an answer that may be stale by the time it is used:
    /// a new observer hears only changes made after it subscribed anyway).
    var isObserved: Bool { observers.load(ordering: .relaxed) > 0 }

    /// Tells every observer that `events` happened.
    func notify(_ events: Set<Event>) {
        guard !events.isEmpty, isObserved else { return }
        for subscriber in subscribers.withLock({ Array($0.values) }) { subscriber.notify(events) }
    }

    /// Ends every observation.
    func finish() {
        closed.withLock { $0 = true }
        let all = subscribers.withLock { all in
            defer { all.removeAll() }
            return Array(all.values)
        }
        observers.store(0, ordering: .relaxed)
        for subscriber in all { subscriber.finish() }
    }

    func subscribe() -> Subscriber {
        let subscriber = Subscriber()
        if closed.withLock({ $0 }) {
            subscriber.finish()
        } else {
            subscribers.withLock { $0[ObjectIdentifier(subscriber)] = subscriber }
            observers.add(1, ordering: .relaxed)
        }
        return subscriber
    }

    func unsubscribe(_ subscriber: Subscriber) {
        if subscribers.withLock({ $0.removeValue(forKey: ObjectIdentifier(subscriber)) }) != nil {
            observers.subtract(1, ordering: .relaxed)
        }
    }

    /// One observer's place in a feed, given up when the last reference to it goes.
    final class Registration: Sendable {
        let feed: ChangeFeed
        let subscriber: Subscriber

        /// Starts observing; events before this call are not reported.
        init(feed: ChangeFeed) {
            self.feed = feed
            subscriber = feed.subscribe()
        }

        deinit {
            subscriber.finish()
            feed.unsubscribe(subscriber)
        }

        /// The events since the last call, or `nil` once the feed finished or the task was
        /// cancelled.
        func next() async -> Set<Event>? { await subscriber.next() }
    }
}

extension ChangeFeed where Event == String {
    /// Tells every observer that the properties of `changes` changed; builds their set of
    /// names only when someone observes (a host that nobody observes pays nothing).
    func notify(_ changes: [PropertyChange]) {
        guard isObserved else { return }
        let subscribers = subscribers.withLock { $0.isEmpty ? [] : Array($0.values) }
        guard !subscribers.isEmpty, !changes.isEmpty else { return }
        let names = Set(changes.map(\.property))
        for subscriber in subscribers { subscriber.notify(names) }
    }
}

/// The names of properties that changed, coalesced: each element is everything that
/// changed since the previous one was taken. Ends when its source closes.
public struct PropertyChanges: AsyncSequence, Sendable {
    let feed: ChangeFeed<String>

    /// Starts observing; changes made before this call are not reported.
    public func makeAsyncIterator() -> Iterator { Iterator(registration: ChangeFeed.Registration(feed: feed)) }

    /// Awaits the next set of changed property names.
    ///
    /// Observing stops when the iterator is dropped (a `break` out of `for await`), when
    /// its task is cancelled, or when the source closes: no observer outlives its iterator.
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        let registration: ChangeFeed<String>.Registration

        /// The properties changed since the last call, or `nil` at the end.
        public mutating func next() async -> Set<String>? {
            await registration.next()
        }
    }
}
