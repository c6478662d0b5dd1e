import PropertyBased
import StateBusRuntime
import Testing

@testable import ZeroMQ

/// `MessageChannel` against a FIFO model, through its real API: the loop side's `push` and
/// `finish`, the consumer's `next()`, including a consumer that waits, is woken by a push or
/// by `finish`, or is cancelled.
///
/// What the socket layer relies on: elements come out in the order they went in, none lost
/// or duplicated; nothing is accepted after `finish`; reading pauses when `limit` wait and
/// resumes (once) when half have drained, so memory stays bounded.
@Suite("MessageChannel against a FIFO model")
struct MessageChannelPropertyTests {
    struct Step: Sendable, CustomStringConvertible {
        let kind: Int
        let count: Int

        var description: String { "(\(kind), \(count))" }
    }

    static let steps = zip(Gen.int(in: 0...9), Gen.int(in: 1...5))
        .map { Step(kind: $0, count: $1) }
        .array(of: 1...60)

    @Test("order, back-pressure and finishing match the model under random pushes and receives")
    func randomEvents() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...8), Self.steps) { limit, steps in
            let resumes = ResumeCounter()
            let channel = MessageChannel<Int>(limit: limit, onResumeReading: { resumes.increment() })
            var model = ChannelModel(limit: max(2, limit))
            var waiter: Task<Int?, Never>?
            var nextElement = 0
            for (index, step) in steps.enumerated() {
                let place = "step \(index) \(step) of \(steps), limit \(limit)"
                switch step.kind {
                case 0...3:
                    // The loop thread reads a few messages, or a burst that crosses the
                    // limit several times and makes the FIFO compact its storage.
                    let count = step.kind == 3 ? step.count * 500 : step.count
                    for _ in 0..<count {
                        let element = nextElement
                        nextElement += 1
                        let expected = model.push(element)
                        #expect(channel.push(element) == expected.pause, "\(place): push \(element)")
                        if let delivered = expected.toWaiter, let task = waiter {
                            waiter = nil
                            #expect(await task.value == delivered, "\(place): the waiting consumer")
                        }
                    }
                case 4...7:
                    // The consumer asks for the next element; with nothing there, it waits.
                    guard waiter == nil else { break }
                    if let expected = model.next() {
                        #expect(await channel.next() == expected, "\(place)")
                    } else {
                        waiter = Task { await channel.next() }
                        await Self.waitUntilWaiting(channel)
                    }
                case 8:
                    model.finish()
                    channel.finish()
                    if let task = waiter {
                        waiter = nil
                        #expect(await task.value == nil, "\(place): finish wakes the waiting consumer with nil")
                    }
                default:
                    // A waiting consumer's task is cancelled: it gets nil, nothing is lost.
                    if let task = waiter {
                        waiter = nil
                        model.waiting = false
                        task.cancel()
                        #expect(await task.value == nil, "\(place): a cancelled consumer")
                    }
                }
                let (buffered, paused) = channel.state.withLock { ($0.buffer.count, $0.readingPaused) }
                guard buffered == model.queue.count, paused == model.paused, resumes.value == model.resumes else {
                    Issue.record(
                        """
                        after \(place): buffered \(buffered), paused \(paused), resumed \(resumes.value); \
                        the model \(model.queue.count), \(model.paused), \(model.resumes)
                        """)
                    waiter?.cancel()
                    return
                }
            }
            // Drain: everything buffered comes out in order, then nil once finished.
            if let task = waiter {
                task.cancel()
                _ = await task.value
            }
            model.finish()
            channel.finish()
            while !model.queue.isEmpty, let expected = model.next() {
                #expect(await channel.next() == expected, "draining \(steps), limit \(limit)")
            }
            #expect(await channel.next() == nil)
        }
    }

    /// Yields until the consumer's continuation is stored, so the next event meets a waiting
    /// consumer rather than racing with it; the deadline turns a hang into a failure.
    static func waitUntilWaiting(_ channel: MessageChannel<Int>) async {
        let deadline = ContinuousClock.now + .seconds(5)
        while !channel.state.withLock({ $0.waiting != nil }) {
            guard ContinuousClock.now < deadline else {
                Issue.record("the consumer never started waiting")
                return
            }
            await Task.yield()
        }
    }
}

/// Counts `onResumeReading` calls, which come from the consumer's task.
final class ResumeCounter: Sendable {
    private let count = Locked(0)
    var value: Int { count.withLock { $0 } }
    func increment() { count.withLock { $0 += 1 } }
}

/// The reference: an array, two flags and a counter.
struct ChannelModel {
    let limit: Int
    var queue: [Int] = []
    var finished = false
    var paused = false
    var resumes = 0
    /// Whether a consumer waits (it gets the next push, or nil on finish).
    var waiting = false

    /// - Returns: whether the loop should pause reading, and the element a waiting
    ///   consumer receives directly.
    mutating func push(_ element: Int) -> (pause: Bool, toWaiter: Int?) {
        if finished { return (false, nil) }
        if waiting {
            waiting = false
            return (false, element)
        }
        queue.append(element)
        if queue.count >= limit && !paused {
            paused = true
            return (true, nil)
        }
        return (false, nil)
    }

    /// The element the consumer gets at once (`.some(nil)` once finished and drained), or
    /// `nil` when it has to wait.
    mutating func next() -> Int?? {
        if !queue.isEmpty {
            let element = queue.removeFirst()
            if paused && queue.count <= limit / 2 {
                paused = false
                resumes += 1
            }
            return .some(element)
        }
        if finished { return .some(nil) }
        waiting = true
        return nil
    }

    mutating func finish() {
        finished = true
        waiting = false
    }
}
