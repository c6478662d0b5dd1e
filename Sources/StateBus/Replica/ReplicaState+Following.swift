import StateBusWire

/// A view's state as what its ``ObjectFollower`` applies the host's batches to.
extension ReplicaState: FollowedCopy {
    /// What applying a view's batches needs and collects.
    struct Context {
        /// The view's id: a batch of its own write is that write's echo.
        let viewID: String
        /// Collects the indexes of changed properties, when someone observes names (the
        /// fast path).
        var tracker: ChangeTracker?
        /// The names whose visible value changed (the general path).
        var changed = Set<String>()
        /// The view's own writes the batches echoed: each is accepted at its sequence.
        var echoes: [(writeID: UInt64, sequence: UInt64)] = []
    }

    var propertyCount: Int { confirmed.count }

    /// With no write of the view's own pending, the view shows the confirmed values, and
    /// only the latest of each is ever seen: the run is applied under one lock before its
    /// observers hear of it. (With writes pending, each change is rebased under them.)
    var keepsOnlyLatestValues: Bool { isPlain }

    mutating func apply(_ batch: UpdateRunReader.Batch, _ changes: [IndexedChange], context: inout Context) -> Bool {
        if batch.origin == context.viewID, batch.writeID != 0 { context.echoes.append((batch.writeID, batch.sequence)) }
        if isPlain {
            for change in changes { _ = applyPlain(change, sequence: batch.sequence, tracker: &context.tracker) }
            finishPlainBatch(sequence: batch.sequence)
        } else {
            _ = applyBatch(
                sequence: batch.sequence, changes: changes, origin: batch.origin, writeID: batch.writeID, myViewID: context.viewID,
                changed: &context.changed)
        }
        // A change that does not lead into its value leaves the value as it was, as the
        // view's own optimistic edits do when the host's list moved under them.
        return true
    }
}
