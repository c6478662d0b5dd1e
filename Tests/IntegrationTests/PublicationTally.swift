import Foundation
import StateBusWire
import Synchronization
import ZeroMQ

/// A subscriber of its own in the test process that counts, across host restarts, how often
/// each view write (origin and write id) is published: a durable write is published only
/// after its commit, so a write published twice was applied twice.
///
/// It can miss publications made while it reconnects to a restarted host, so it may
/// undercount duplicates, never invent them.
final class PublicationTally: Sendable {
    private let counts = Mutex<[String: Int]>([:])
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
                }
            }
        }
    }

    /// View writes published so far.
    var published: Int { counts.withLock { $0.count } }

    /// View writes published more than once, with how often.
    var duplicates: [String: Int] { counts.withLock { $0.filter { $0.value > 1 } } }

    /// Stops counting.
    func stop() { stopped.store(true, ordering: .relaxed) }
}
