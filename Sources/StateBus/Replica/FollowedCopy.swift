import StateBusWire

/// What an ``ObjectFollower`` applies a host's batches to: a view's state
/// (``ReplicaState``), a relay's copy of an object (``CopiedValues``).
protocol FollowedCopy {
    /// What applying a batch needs or collects beyond the copy (a view notes the echoes of
    /// its own writes and what changed for its observers; a relay's copy needs nothing).
    associatedtype Context

    /// The sequence of the last batch in the copy.
    var sequence: UInt64 { get }
    /// How many properties the copy holds: a change of a property at or past it is not the
    /// object's.
    var propertyCount: Int { get }

    /// Applies one batch, the next after ``sequence``, whose changes all name properties
    /// below ``propertyCount``, and makes its sequence the copy's.
    /// - Returns: `false` when a change does not lead into the value it changes (the host
    ///   publishes only changes that do): the copy is wrong and needs a new snapshot.
    mutating func apply(_ batch: UpdateRunReader.Batch, _ changes: [IndexedChange], context: inout Context) -> Bool

    /// Whether the copy keeps only each property's latest value, so that a change whose
    /// whole value a later change of the same run replaces need not reach it: its batch is
    /// applied without it (its sequence, its echo), and its value is never decoded.
    var keepsOnlyLatestValues: Bool { get }
}

extension FollowedCopy {
    /// Every change reaches the copy unless it says otherwise.
    var keepsOnlyLatestValues: Bool { false }
}

/// The batches of a run, read one at a time: a publication read in place
/// (``UpdateRunReader``) or a run decoded before (``DecodedRun/Batches``).
protocol RunBatches {
    /// The next batch's header, its changes read into `changes` (replacing what was there),
    /// or `nil` after the last.
    mutating func nextBatch(into changes: inout [IndexedChange]) throws(WireDecodingError) -> UpdateRunReader.Batch?

    /// From now on, leaves out of each batch the changes whose whole value a later change
    /// of the run replaces whole (for a copy that ``FollowedCopy/keepsOnlyLatestValues``).
    mutating func leaveOutSupersededChanges() throws(WireDecodingError)
}

extension UpdateRunReader: RunBatches {
    mutating func nextBatch(into changes: inout [IndexedChange]) throws(WireDecodingError) -> Batch? {
        guard let batch = try nextBatch() else { return nil }
        changes.removeAll(keepingCapacity: true)
        for _ in 0..<batch.changes {
            if let change = try nextLiveChange() { changes.append(change) }
        }
        return batch
    }
}

extension DecodedRun {
    /// The run's batches, one at a time.
    struct Batches: RunBatches {
        let run: DecodedRun
        private var index = 0

        init(_ run: DecodedRun) { self.run = run }

        /// Decoded already: every change is handed on.
        mutating func leaveOutSupersededChanges() {}

        mutating func nextBatch(into changes: inout [IndexedChange]) throws(WireDecodingError) -> UpdateRunReader.Batch? {
            guard index < run.batches.count else { return nil }
            defer { index += 1 }
            changes = run.batches[index].changes
            return run.batches[index].batch
        }
    }
}
