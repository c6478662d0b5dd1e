import Foundation
import StateBusRuntime
import StateBusWire
import Synchronization
import ZeroMQ

/// A subscriber of its own in the test process that counts, across host restarts, how often
/// each view write (origin and write id) is published: a durable write is published only
/// after its commit, so a write published twice was applied twice.
///
/// It also watches integer values: where each property is written by one view with growing
/// values, a published value below an earlier one means writes were applied out of order.
///
/// It can miss publications made while it reconnects to a restarted host, so it may
/// undercount duplicates and regressions, never invent them.
final class PublicationTally: Sendable {
    private let counts = Locked<[String: Int]>([:])
    /// The highest integer published per property, and every publication of a lower one.
    private let highest = Locked<[String: Int64]>([:])
    private let backwards = Locked<[String]>([])
    private let stopped = Atomic<Bool>(false)
    /// Those waiting for a value (``waitForValue(of:atLeast:timeout:)``), answered by the
    /// subscriber's thread; `ended` once that thread has stopped.
    private let waiters = Locked<(list: [Waiter], ended: Bool)>(([], false))

    private struct Waiter {
        let property: String
        let minimum: Int64
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<Bool, Never>
    }

    /// Starts counting the updates of `object` published at `updatesEndpoint`.
    convenience init(updatesEndpoint: String, object: String) {
        self.init(updatesEndpoints: [updatesEndpoint], object: object)
    }

    /// Starts counting the updates of `object` published at any of `updatesEndpoints` (the
    /// hosts of a high-availability group: a write applied by two of them counts twice).
    init(updatesEndpoints: [String], object: String) {
        let topic = Array("u/\(object)".utf8) + [0]
        Thread.detachNewThread { [self] in
            defer { answerWaiters(ending: true) }
            guard let context = try? Context(), let socket = try? Socket(context: context, type: .sub) else { return }
            defer { socket.close() }
            _ = try? socket.set(.receiveHighWaterMark, 0)
            _ = try? socket.subscribe(topic)
            for endpoint in updatesEndpoints { _ = try? socket.connect(endpoint) }
            let poller = Poller()
            _ = poller.add(socket, events: .readable)
            while !stopped.load(ordering: .relaxed) {
                // At least every 100 ms: the waiters' deadlines are kept to within that.
                defer { answerWaiters(ending: false) }
                guard (try? poller.poll(timeout: .milliseconds(100))) != nil else { continue }
                while let frames = try? socket.tryReceiveMultipart(), frames.count == 2 {
                    guard let publication = try? Statebus_V1_Publication(serializedBytes: frames[1].bytes) else { continue }
                    let writes = publication.updates.filter { !$0.origin.isEmpty }.map { "\($0.origin)#\($0.writeID)" }
                    counts.withLock { counts in
                        for write in writes { counts[write, default: 0] += 1 }
                    }
                    for update in publication.updates {
                        for change in update.changes where change.path.isEmpty {
                            guard case .intValue(let value) = change.value.kind else { continue }
                            highest.withLock { highest in
                                if let top = highest[change.property], value < top {
                                    backwards.withLock {
                                        $0.append(
                                            "\(change.property) \(top) -> \(value) (epoch \(update.epoch), sequence \(update.sequence), write \(update.origin)#\(update.writeID))"
                                        )
                                    }
                                } else {
                                    highest[change.property] = value
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// View writes published so far.
    var published: Int { counts.withLock { $0.count } }

    /// View writes published more than once, with how often.
    var duplicates: [String: Int] { counts.withLock { $0.filter { $0.value > 1 } } }

    /// Integer values published below an earlier value of the same property, described.
    var regressions: [String] { backwards.withLock { $0 } }

    /// The highest integer published for `property` (in protocol version 1's form), if any.
    func highest(of property: String) -> Int64? { highest.withLock { $0[property] } }

    /// Waits until `property` has been published with a value of at least `minimum`, up to
    /// `timeout`. - Returns: whether it was, by the deadline.
    func waitForValue(of property: String, atLeast minimum: Int64, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        return await withCheckedContinuation { continuation in
            let answer = waiters.withLock { waiters -> Bool? in
                if let top = highest(of: property), top >= minimum { return true }
                if waiters.ended { return false }
                waiters.list.append(Waiter(property: property, minimum: minimum, deadline: deadline, continuation: continuation))
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// Answers the waiters whose value came or whose deadline passed (all of them, `ending`).
    private func answerWaiters(ending: Bool) {
        let now = ContinuousClock.now
        let answered = waiters.withLock { waiters -> [(CheckedContinuation<Bool, Never>, Bool)] in
            if ending { waiters.ended = true }
            var answered: [(CheckedContinuation<Bool, Never>, Bool)] = []
            waiters.list.removeAll { waiter in
                if let top = highest(of: waiter.property), top >= waiter.minimum {
                    answered.append((waiter.continuation, true))
                    return true
                }
                guard ending || now >= waiter.deadline else { return false }
                answered.append((waiter.continuation, false))
                return true
            }
            return answered
        }
        for (continuation, seen) in answered { continuation.resume(returning: seen) }
    }

    /// Stops counting.
    func stop() { stopped.store(true, ordering: .relaxed) }
}
