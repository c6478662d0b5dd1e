import Foundation
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
    private let counts = Mutex<[String: Int]>([:])
    /// The highest integer published per property, and every publication of a lower one.
    private let highest = Mutex<[String: Int64]>([:])
    private let backwards = Mutex<[String]>([])
    private let stopped = Atomic<Bool>(false)

    /// Starts counting the updates of `object` published at `updatesEndpoint`.
    init(updatesEndpoint: String, object: String) {
        let topic = Array("u/\(object)".utf8) + [0]
        Thread.detachNewThread { [self] in
            guard let context = try? Context(), let socket = try? Socket(context: context, type: .sub) else { return }
            defer { socket.close() }
            _ = try? socket.set(.receiveHighWaterMark, 0)
            _ = try? socket.subscribe(topic)
            _ = try? socket.connect(updatesEndpoint)
            let poller = Poller()
            _ = poller.add(socket, events: .readable)
            while !stopped.load(ordering: .relaxed) {
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

    /// Stops counting.
    func stop() { stopped.store(true, ordering: .relaxed) }
}
