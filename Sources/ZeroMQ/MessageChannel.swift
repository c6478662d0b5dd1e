import StateBusRuntime

/// The bridge from a loop thread to one async consumer: a state machine applied under a
/// lock, whose events return what to do, with continuations resumed outside the lock.
///
/// The loop thread ``push(_:)``es received messages; the consumer awaits ``next()``. When
/// more than `limit` messages wait, `push` tells the loop to stop reading the socket, and the
/// consumer's `next()` tells it to resume once half have drained: libzmq's high-water mark
/// then holds the sender back, so memory stays bounded instead of growing without limit.
final class MessageChannel<Element: Sendable>: Sendable {
    enum PushAction {
        case none
        case resume(CheckedContinuation<Element?, Never>)
        case pauseReading
    }

    struct State {
        var buffer = FIFO<Element>()
        var waiting: CheckedContinuation<Element?, Never>?
        var finished = false
        var readingPaused = false
        let limit: Int

        mutating func push(_ element: Element) -> PushAction {
            if finished { return .none }
            if let waiting {
                self.waiting = nil
                return .resume(waiting)
            }
            buffer.push(element)
            if buffer.count >= limit && !readingPaused {
                readingPaused = true
                return .pauseReading
            }
            return .none
        }

        enum NextAction {
            case deliver(Element?, resumeReading: Bool)
            case wait
        }

        mutating func next() -> NextAction {
            if let element = buffer.pop() {
                let resume = readingPaused && buffer.count <= limit / 2
                if resume { readingPaused = false }
                return .deliver(element, resumeReading: resume)
            }
            if finished { return .deliver(nil, resumeReading: false) }
            return .wait
        }

        mutating func finish() -> CheckedContinuation<Element?, Never>? {
            finished = true
            defer { waiting = nil }
            return waiting
        }
    }

    let state: Locked<State>
    /// Called (from the consumer's task) when reading should resume.
    let onResumeReading: @Sendable () -> Void

    init(limit: Int, onResumeReading: @escaping @Sendable () -> Void) {
        state = Locked(State(limit: max(2, limit)))
        self.onResumeReading = onResumeReading
    }

    /// Offers one element; called on the loop thread.
    /// - Returns: `true` when the loop should stop reading until told to resume.
    func push(_ element: Element) -> Bool {
        switch state.withLock({ $0.push(element) }) {
        case .none: return false
        case .pauseReading: return true
        case .resume(let continuation):
            continuation.resume(returning: element)
            return false
        }
    }

    /// Ends the sequence: the consumer gets what is buffered, then `nil`.
    func finish() {
        state.withLock { $0.finish() }?.resume(returning: nil)
    }

    /// The next element, or `nil` when finished or when the waiting task is cancelled.
    func next() async -> Element? {
        switch state.withLock({ $0.next() }) {
        case .deliver(let element, let resumeReading):
            if resumeReading { onResumeReading() }
            return element
        case .wait:
            break
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                let immediate: (Element?, Bool)? = state.withLock { state in
                    if Task.isCancelled { return (nil, false) }
                    switch state.next() {
                    case .deliver(let element, let resumeReading): return (element, resumeReading)
                    case .wait:
                        state.waiting = continuation
                        return nil
                    }
                }
                if let (element, resumeReading) = immediate {
                    if resumeReading { onResumeReading() }
                    continuation.resume(returning: element)
                }
            }
        } onCancel: {
            let waiting = state.withLock { state in
                defer { state.waiting = nil }
                return state.waiting
            }
            waiting?.resume(returning: nil)
        }
    }
}
