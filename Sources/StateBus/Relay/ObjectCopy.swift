import StateBusWire

/// A relay's copy of one object: values and versions by property index, as its upstream's
/// snapshot and runs give them, and the sequence that reflects. What it serves as a snapshot
/// (in either version). Runs apply in sequence order; while a snapshot is on its way, they
/// wait in a bounded buffer.
struct ObjectCopy {
    /// What applying one upstream run did.
    enum Outcome: Equatable {
        /// Applied (or buffered, while a snapshot is on its way).
        case applied
        /// Already in the copy (its batches are not newer).
        case old
        /// A batch is missing before it: the copy needs a new snapshot.
        case gap
    }

    let name: String
    /// The object's index in the upstream's welcome.
    let index: Int
    let layout: PropertyLayout
    private(set) var epoch: UInt64 = 0
    private(set) var sequence: UInt64 = 0
    private(set) var values: [Value] = []
    /// Where the elements of keyed collections in `values` sit, by property index: kept by
    /// the element operations applied in place, dropped by any other change of the property.
    private var elementPositions: [Int: ElementPositions] = [:]
    private(set) var versions: [UInt64] = []
    /// Whether the copy holds the upstream's state: a snapshot arrived and nothing was
    /// missed since.
    private(set) var isSynced = false
    /// The request id of the snapshot on its way (0: none).
    private(set) var snapshotRequestID: UInt64 = 0
    private var incoming = IncomingSnapshot()
    /// Runs that came while a snapshot is on its way.
    private var buffered: JoinBuffer<DecodedRun>

    /// - Parameter maxBufferedBytes: how many bytes of runs wait for a snapshot on its way;
    ///   past it they are dropped and the snapshot asked for again.
    init(name: String, index: Int, layout: PropertyLayout, maxBufferedBytes: Int) {
        self.name = name
        self.index = index
        self.layout = layout
        buffered = JoinBuffer(maxBytes: maxBufferedBytes)
    }

    /// Forgets the copy's state: a snapshot is needed (a new epoch, a gap).
    mutating func invalidate() {
        isSynced = false
        snapshotRequestID = 0
        incoming.reset()
        buffered.reset()
    }

    /// A snapshot was asked for with `requestID`; runs wait until it is complete.
    mutating func awaitSnapshot(requestID: UInt64) {
        isSynced = false
        snapshotRequestID = requestID
        incoming.reset()
    }

    /// Takes one snapshot part.
    /// - Returns: `true` when the snapshot is complete and the copy synced; `false` while
    ///   more parts are to come; `nil` when a part came out of order, is not valid, or a run
    ///   buffered meanwhile does not follow (the snapshot must be asked for again).
    mutating func receive(_ part: inout SnapshotPartReader) -> Bool? {
        // The copy follows the epoch its snapshot came from: a run of another is a gap.
        guard part.part == 0 || part.epoch == epoch else { return nil }
        let outcome = incoming.take(&part, propertyCount: layout.count)
        if case .invalid = outcome { return nil }
        if part.part == 0 { epoch = part.epoch }
        guard outcome == .complete else { return false }
        values = incoming.values
        elementPositions.removeAll()
        versions = incoming.versions
        sequence = incoming.sequence
        incoming.reset()
        snapshotRequestID = 0
        isSynced = true
        // What arrived meanwhile: newer batches apply in order; a hole means another snapshot.
        for run in buffered.take() where apply(run) == .gap { return nil }
        return true
    }

    /// Applies one upstream run (or buffers it while a snapshot is on its way).
    /// - Parameter bytes: the run's encoded size, for the buffer's bound.
    /// - Returns: `.gap` when the buffer passed its bound too (it is then empty).
    mutating func apply(_ run: DecodedRun, bytes: Int = 0) -> Outcome {
        guard isSynced else {
            guard snapshotRequestID != 0, buffered.append(run, size: bytes) else { return .gap }
            return .applied
        }
        guard run.epoch == epoch else { return .gap }
        var outcome = Outcome.old
        for (batch, changes) in run.batches {
            let place = BatchPlace(batch: batch.sequence, following: sequence)
            if place == .alreadyApplied { continue }
            guard place == .next, changes.allSatisfy({ $0.property < values.count }) else {
                isSynced = false
                return .gap
            }
            for change in changes {
                // The positions go with any change but one made through them.
                var positions = elementPositions.removeValue(forKey: change.property)
                if change.replacesWholeValue {
                    values[change.property] = change.value
                } else if values[change.property].applyElementOperation(
                    change.operation, change.value, at: change.path, position: change.position, positions: &positions) != nil
                {
                    // An element found through the positions and changed where it is: the
                    // cost of a change to one element of a large collection is the element's.
                    elementPositions[change.property] = positions
                } else {
                    // The upstream only publishes paths that lead into the value; one that
                    // does not means the copy is wrong, so it is taken again.
                    guard
                        let updated = try? values[change.property].applying(
                            change.operation, change.value, at: change.path, position: change.position)
                    else {
                        isSynced = false
                        return .gap
                    }
                    values[change.property] = updated
                }
                versions[change.property] = batch.sequence
            }
            sequence = batch.sequence
            outcome = .applied
        }
        return outcome
    }
}
