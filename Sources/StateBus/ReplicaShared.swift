import StateBusWire
import Synchronization

/// What a replica shares between its I/O loop and the threads that read and write it:
/// the state under one lock, the change feed, the connection state and open receipts.
final class ReplicaShared: Sendable {
    struct Inner {
        var state = ReplicaState()
        var connection = ConnectionState.connecting
        var receipts: [UInt64: WriteReceipt] = [:]
        var nextWriteID: UInt64 = 1
        var schema: [String: ValueKind?] = [:]
        var lastError: StateBusError?
    }

    let inner = Mutex(Inner())
    let feed = ChangeFeed()
    let connectionFeed = ChangeFeed()
    /// Told `["sequence"]` whenever the replica's position (epoch or sequence) moves, also
    /// when no visible value changes (the echo of the replica's own write).
    let positionFeed = ChangeFeed()
    let rejections = ChangeFeed()

    /// Applies an event to the state and notifies observers of what changed.
    func update(_ body: (inout ReplicaState) -> Set<String>) {
        let (changed, moved) = inner.withLock { inner -> (Set<String>, Bool) in
            let before = (inner.state.epoch, inner.state.sequence)
            let changed = body(&inner.state)
            return (changed, before != (inner.state.epoch, inner.state.sequence))
        }
        feed.notify(changed)
        if moved { positionFeed.notify(["sequence"]) }
    }

    func setConnection(_ connection: ConnectionState) {
        let changed = inner.withLock { inner -> Bool in
            guard inner.connection != connection, inner.connection != .closed else { return false }
            inner.connection = connection
            return true
        }
        if changed { connectionFeed.notify([connection.description]) }
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
        receipt?.complete(result)
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
