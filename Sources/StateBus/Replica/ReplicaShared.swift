import CoreMetrics
import Foundation
import StateBusRuntime
import StateBusWire
import Synchronization

/// What a replica shares between its I/O loop and the threads that read and write it:
/// the state under one lock, the change feed, the connection state and open receipts.
final class ReplicaShared: Sendable {
    struct Inner {
        var state = ReplicaState()
        var connection = ConnectionState.connecting
        var receipts: [UInt64: WriteReceipt] = [:]
        var nextWriteID = ReplicaShared.firstWriteID()
        var lastError: StateBusError?
        /// The host that welcomed the replica last: its name and the control endpoint it was
        /// reached at (for a group's hosts, the leader's).
        var welcomedBy: (name: String, controlEndpoint: String)?
    }

    let inner = Locked(Inner())

    /// A replica's first write id: the wall clock in milliseconds times 2^20 (room for a
    /// million writes per millisecond of the replica's life). Write ids then only grow, also
    /// across restarts of a view that keeps its ``ReplicaConfiguration/viewID``: the host
    /// takes a write with the view id, write id and changes of one it answered before for a
    /// copy, and answers it without applying it, so a restarted view counting from 1 again
    /// would lose a write that repeats one of its predecessor's.
    static func firstWriteID() -> UInt64 {
        UInt64(max(0, Date().timeIntervalSince1970 * 1000)) << 20
    }
    /// The names of the properties whose visible values changed (``Replica/changes``).
    let feed = ChangeFeed<String>()
    /// Told ``ReplicaEvent/connectionChanged`` and ``ReplicaEvent/errorChanged``
    /// (``Replica/connectionChanges``).
    let connectionFeed = ChangeFeed<ReplicaEvent>()
    /// Told ``ReplicaEvent/writesSettled`` whenever the host answers a write, accepted or
    /// not, or writes expire: the number of pending writes changed even when no visible value
    /// did (for ``Replica/waitFor``).
    let writeOutcomes = ChangeFeed<ReplicaEvent>()
    /// Told ``ReplicaEvent/sequenceAdvanced`` once per I/O turn in which the applied sequence
    /// advanced, whether or not a visible value changed (the echo of this view's own write
    /// changes none).
    let progress = ChangeFeed<ReplicaEvent>()
    /// Update batches applied in order from the updates stream (not from snapshots).
    let appliedUpdates = MetricCounter("statebus_replica_applied_updates_total")
    /// Snapshots applied: the first join, then one per resynchronisation.
    let appliedSnapshots = MetricCounter("statebus_replica_snapshots_total")
    /// Joins started again because the join buffer passed ``ReplicaLimits/maxJoinBufferBytes``.
    let restartedJoins = MetricCounter("statebus_replica_resyncs_total", [("cause", "restarted_join")])
    /// Sequence gaps seen on the updates stream (a batch after a missing one, or a heartbeat
    /// announcing a sequence the replica never received).
    let sequenceGaps = MetricCounter("statebus_replica_resyncs_total", [("cause", "gap")])
    /// The next action call's id (``Replica/call(_:arguments:timeout:)``).
    let nextCallID = Atomic<UInt64>(1)
    /// Connections made again after the first (silence, a new host epoch, a lost hello).
    let reconnections = MetricCounter("statebus_replica_resyncs_total", [("cause", "reconnect")])

    /// From a write to the host's verdict (its reply or its echo), for the metrics backend.
    let writeRoundTrip = Timer(label: "statebus_replica_write_round_trip_seconds")
    /// Writes by their end: accepted, rejected (by the host, or failed otherwise), expired.
    let writesAccepted = Counter(label: "statebus_replica_writes_total", dimensions: [("outcome", "accepted")])
    let writesRejected = Counter(label: "statebus_replica_writes_total", dimensions: [("outcome", "rejected")])
    let writesExpired = Counter(label: "statebus_replica_writes_total", dimensions: [("outcome", "expired")])

    /// Applies an event to the state and notifies observers of what changed.
    func update(_ body: (inout ReplicaState) -> Set<String>) {
        let changed = inner.withLock { body(&$0.state) }
        feed.notify(changed)
    }

    func setConnection(_ connection: ConnectionState) {
        let changed = inner.withLock { inner -> Bool in
            guard inner.connection != connection, inner.connection != .closed else { return false }
            inner.connection = connection
            return true
        }
        if changed { connectionFeed.notify([.connectionChanged]) }
    }

    func complete(writeID: UInt64, with result: Result<UInt64, StateBusError>) {
        let (receipt, changed) = inner.withLock { inner -> (WriteReceipt?, Set<String>) in
            let receipt = inner.receipts.removeValue(forKey: writeID)
            switch result {
            case .success(let sequence): return (receipt, inner.state.accept(writeID: writeID, sequence: sequence))
            case .failure: return (receipt, inner.state.reject(writeID: writeID))
            }
        }
        feed.notify(changed)
        writeOutcomes.notify([.writesSettled])
        if let receipt {
            switch result {
            case .success:
                writesAccepted.increment()
                writeRoundTrip.recordInterval(since: receipt.created)
            case .failure: writesRejected.increment()
            }
        }
        receipt?.complete(result)
    }

    /// Fails the writes whose deadline passed without an answer: they disappear from what
    /// the view shows, and their receipts fail with `error`.
    /// - Returns: how many expired.
    func expireWrites(at now: ContinuousClock.Instant, with error: StateBusError) -> Int {
        let (receipts, changed) = inner.withLock { inner -> ([WriteReceipt], Set<String>) in
            let (expired, changed) = inner.state.expire(at: now)
            return (expired.compactMap { inner.receipts.removeValue(forKey: $0) }, changed)
        }
        guard !receipts.isEmpty || !changed.isEmpty else { return 0 }
        feed.notify(changed)
        writeOutcomes.notify([.writesSettled])
        writesExpired.increment(by: receipts.count)
        for receipt in receipts { receipt.complete(.failure(error)) }
        return receipts.count
    }

    /// Fails every open receipt (the replica is closing).
    func failAll(_ error: StateBusError) {
        let receipts = inner.withLock { inner in
            defer { inner.receipts.removeAll() }
            return Array(inner.receipts.values)
        }
        for receipt in receipts { receipt.complete(.failure(error)) }
    }
}
