import StateBusWire
import SwiftProtobuf

/// A relay's copy of one object, kept in wire form: what it serves as a snapshot, and the
/// sequence that reflects. Upstream batches are applied to it in sequence order; while a
/// snapshot is on its way, batches wait in a bounded buffer.
struct ObjectCopy {
    /// What applying one upstream batch did.
    enum Outcome: Equatable {
        /// Applied (or buffered, while a snapshot is on its way).
        case applied
        /// Already in the copy (its sequence is not newer).
        case old
        /// A batch is missing before it: the copy needs a new snapshot.
        case gap
    }

    let name: String
    private(set) var epoch: UInt64 = 0
    private(set) var sequence: UInt64 = 0
    /// Properties in the order the upstream's snapshot listed them.
    private(set) var properties: [Statebus_V1_PropertyState] = []
    private var index: [String: Int] = [:]
    /// Whether the copy holds the upstream's state: a snapshot arrived and nothing was
    /// missed since.
    private(set) var isSynced = false
    /// The request id of the snapshot on its way (0: none).
    private(set) var snapshotRequestID: UInt64 = 0
    private var incoming: [Statebus_V1_PropertyState] = []
    private var nextChunk: UInt32 = 0
    private var buffered: [Statebus_V1_UpdateBatch] = []
    private(set) var bufferedBytes = 0

    init(name: String) { self.name = name }

    /// Forgets the copy's state: a snapshot is needed (a new epoch, a gap).
    mutating func invalidate() {
        isSynced = false
        snapshotRequestID = 0
        incoming = []
        buffered = []
        bufferedBytes = 0
    }

    /// A snapshot was asked for with `requestID`; batches wait until it is complete.
    mutating func awaitSnapshot(requestID: UInt64) {
        isSynced = false
        snapshotRequestID = requestID
        incoming = []
        nextChunk = 0
    }

    /// Takes one snapshot chunk.
    /// - Returns: `true` when the snapshot is complete and the copy synced; `false` while
    ///   more chunks are to come; `nil` when a chunk came out of order or a batch buffered
    ///   meanwhile does not follow (the snapshot must be asked for again).
    mutating func receive(_ chunk: Statebus_V1_SnapshotChunk) -> Bool? {
        guard chunk.chunkIndex == nextChunk else { return nil }
        if chunk.chunkIndex > 0, chunk.sequence != sequence || chunk.epoch != epoch { return nil }
        epoch = chunk.epoch
        sequence = chunk.sequence
        incoming += chunk.properties
        nextChunk += 1
        guard chunk.last else { return false }
        properties = incoming
        incoming = []
        index = Dictionary(properties.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        snapshotRequestID = 0
        isSynced = true
        // What arrived meanwhile: newer batches apply in order; a hole means another snapshot.
        let waiting = buffered
        buffered = []
        bufferedBytes = 0
        for batch in waiting where apply(batch) == .gap { return nil }
        return true
    }

    /// Applies one upstream batch (or buffers it while a snapshot is on its way).
    /// - Returns: `.gap` when the buffer is past `maxBufferedBytes` too.
    mutating func apply(_ batch: Statebus_V1_UpdateBatch, maxBufferedBytes: Int = .max) -> Outcome {
        guard isSynced else {
            guard snapshotRequestID != 0 else { return .gap }
            let size = batch.serializedSizeEstimate
            guard bufferedBytes + size <= maxBufferedBytes else { return .gap }
            buffered.append(batch)
            bufferedBytes += size
            return .applied
        }
        guard batch.epoch == epoch else { return .gap }
        if batch.sequence <= sequence { return .old }
        guard batch.sequence == sequence + 1 else {
            isSynced = false
            return .gap
        }
        for change in batch.changes {
            let position: Int
            if let known = index[change.property] {
                position = known
            } else {
                var added = Statebus_V1_PropertyState()
                added.name = change.property
                properties.append(added)
                position = properties.count - 1
                index[change.property] = position
            }
            if change.path.isEmpty, change.operation == .replace {
                properties[position].value = change.value
            } else {
                // The host only publishes paths that lead into the value; one that does not
                // means the copy is wrong, so it is taken again.
                guard let updated = try? PropertyChange(wire: change).applied(to: Value(wire: properties[position].value)) else {
                    isSynced = false
                    return .gap
                }
                properties[position].value = updated.wire
            }
            properties[position].version = batch.sequence
        }
        sequence = batch.sequence
        return .applied
    }
}

extension Statebus_V1_UpdateBatch {
    /// What the batch holds, for the buffer's bound: its encoded size.
    var serializedSizeEstimate: Int { (try? serializedBytes() as [UInt8])?.count ?? 0 }
}
