import StateBusRuntime

/// The events a watch has read and its consumer has not taken yet, bounded in bytes.
///
/// The watch's reader adds each event as it reads it (on the client's transfers thread); the
/// consumer takes them in order through ``next()``. When the events waiting would pass
/// ``limit``, ``add(_:)`` refuses and the reader ends the watch with an error that the
/// consumer gets after the events already waiting: nothing is dropped silently, and a
/// consumer that stalls costs at most `limit` bytes and one event (and one answer line being
/// read). The consumer gets the error once; ``next()`` returns `nil` after it.
final class WatchBacklog: Sendable {
    /// The most bytes of events that may wait for the consumer.
    let limit: Int

    private struct State {
        var events: [EtcdWatchEvent] = []
        /// The position of the next event to hand out in `events`.
        var head = 0
        var bytes = 0
        /// How the watch ended once it has: `nil` inside for an end without error.
        var ending: EtcdError?? = nil
        /// The consumer waiting for an event, if any.
        var waiter: CheckedContinuation<EtcdWatchEvent?, any Error>?
        /// Set when the consumer's task was cancelled: `next()` returns `nil` from then on.
        var cancelled = false
        /// Who waits for the watch to end (``waitUntilEnded()``).
        var endWaiters: [CheckedContinuation<Void, Never>] = []
        /// Who waits for a consumer to wait (``waitUntilConsumerWaits()``).
        var consumerWatchers: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    /// A backlog of at most `limit` bytes of events.
    init(limit: Int) {
        self.limit = limit
    }

    /// What an event counts for: its key and value, and room for the rest.
    static func size(of event: EtcdWatchEvent) -> Int {
        event.keyValue.key.count + event.keyValue.value.count + 64
    }

    /// Hands `event` to the waiting consumer, or keeps it for the next call of ``next()``.
    /// - Returns: `false` when keeping it would pass ``limit`` (the event is not kept: the
    ///   watch must end), or when the watch has ended.
    func add(_ event: EtcdWatchEvent) -> Bool {
        let size = Self.size(of: event)
        let (accepted, waiter) = state.withLock { state -> (Bool, CheckedContinuation<EtcdWatchEvent?, any Error>?) in
            guard state.ending == nil, !state.cancelled else { return (false, nil) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (true, waiter)
            }
            // An event always fits an empty backlog, so that one larger than the limit does
            // not end a watch whose consumer keeps up: the bound is the limit plus one event.
            guard state.bytes == 0 || state.bytes + size <= limit else { return (false, nil) }
            state.events.append(event)
            state.bytes += size
            return (true, nil)
        }
        waiter?.resume(returning: event)
        return accepted
    }

    /// How many bytes of events wait for the consumer.
    var waitingBytes: Int { state.withLock { $0.bytes } }

    /// Returns once a consumer waits in ``next()`` for an event (for tests).
    func waitUntilConsumerWaits() async {
        await withCheckedContinuation { (watcher: CheckedContinuation<Void, Never>) in
            let waiting = state.withLock { state -> Bool in
                if state.waiter != nil { return true }
                state.consumerWatchers.append(watcher)
                return false
            }
            if waiting { watcher.resume() }
        }
    }

    /// Ends the watch: the consumer gets the events still waiting, then `error` (or the end
    /// of the stream, for `nil`). Only the first call counts.
    func finish(throwing error: EtcdError?) {
        let (waiter, endWaiters) = state.withLock { state -> (CheckedContinuation<EtcdWatchEvent?, any Error>?, [CheckedContinuation<Void, Never>]) in
            guard state.ending == nil else { return (nil, []) }
            state.ending = .some(error)
            defer {
                state.waiter = nil
                state.endWaiters = []
            }
            return (state.waiter, state.endWaiters)
        }
        for endWaiter in endWaiters { endWaiter.resume() }
        guard let waiter else { return }
        if let error { waiter.resume(throwing: error) } else { waiter.resume(returning: nil) }
    }

    /// Returns once the watch has ended (its reading stopped), whatever the consumer took.
    func waitUntilEnded() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let ended = state.withLock { state -> Bool in
                if state.ending != nil { return true }
                state.endWaiters.append(waiter)
                return false
            }
            if ended { waiter.resume() }
        }
    }

    /// The next event, in order; `nil` once the watch ended without error or the calling task
    /// was cancelled.
    /// - Throws: why the watch ended, once the events before it have been taken.
    func next() async throws -> EtcdWatchEvent? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<EtcdWatchEvent?, any Error>) in
                enum Outcome {
                    case event(EtcdWatchEvent?)
                    case failure(any Error)
                    case wait
                }
                var watchers: [CheckedContinuation<Void, Never>] = []
                let outcome = state.withLock { state -> Outcome in
                    if state.cancelled { return .event(nil) }
                    if state.head < state.events.count {
                        let event = state.events[state.head]
                        state.head += 1
                        state.bytes -= Self.size(of: event)
                        if state.head == state.events.count || state.head >= 1024 {
                            state.events.removeFirst(state.head)
                            state.head = 0
                        }
                        return .event(event)
                    }
                    switch state.ending {
                    case .some(.some(let error)):
                        // Delivered once: the stream then ends, as a thrown stream does.
                        state.ending = .some(nil)
                        return .failure(error)
                    case .some(.none): return .event(nil)
                    case .none:
                        precondition(state.waiter == nil, "a watch's stream was iterated from two tasks at once")
                        state.waiter = waiter
                        swap(&watchers, &state.consumerWatchers)
                        return .wait
                    }
                }
                switch outcome {
                case .event(let event): waiter.resume(returning: event)
                case .failure(let error): waiter.resume(throwing: error)
                case .wait: for watcher in watchers { watcher.resume() }
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<EtcdWatchEvent?, any Error>? in
                state.cancelled = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }
}
