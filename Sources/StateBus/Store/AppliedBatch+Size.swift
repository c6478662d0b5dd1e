import StateBusWire

extension AppliedBatch {
    /// An upper bound of the batch's encoded size as an element of a version-1
    /// publication's `updates` (with that field's tag and length), for splitting publications
    /// by bytes (``HostLimits/maxPublicationBytes``) without encoding twice.
    ///
    /// The batch: its tag and length, object, epoch, sequence, origin and write id with their
    /// tags and lengths (64 and the names' bytes at most). Each change: its tag and length,
    /// its property's, the path, the value, the operation and the position (24 and the
    /// property's name at most, besides the path and value).
    var encodedSizeBound: Int {
        // Statements, not one expression: as one expression, the nested choice with optional
        // fallbacks takes the type checker past its limit in a release build.
        var total = 64 + object.utf8.count + (origin?.utf8.count ?? 0)
        for item in changes {
            let value: Value
            if item.change.replacesWholeValue {
                value = item.newValue
            } else if item.change.operation == .replace {
                value = item.part ?? item.newValue[item.change.path] ?? item.change.value
            } else {
                value = item.change.value
            }
            let property = 24 + item.change.property.utf8.count
            total += property + item.change.path.encodedSizeBound + value.encodedSizeBound
        }
        return total
    }
}

extension AppliedBatch {
    /// An upper bound of what the batch adds to a version-2 run's encoded size
    /// (`UpdateRunEncoder.encodedSize`), for splitting runs by bytes without encoding twice.
    ///
    /// Per batch: its `batch_changes` entry and that field's tag and length, a byte more for
    /// the `batches` count and for each of the two enclosing lengths (13 at most). A view's
    /// batch adds its offset, its write id and its origin with their tags, lengths and packed
    /// fields' prefixes (36 and the origin's bytes at most).
    var runSizeBound: Int {
        var total = 13 + (origin.map { 36 + $0.utf8.count } ?? 0) + Self.runSizeBound(of: changes.first)
        for item in changes.rest { total += Self.runSizeBound(of: item) }
        return total
    }

    /// A change's cell (5 bytes at most) and its column's entry, with the growth of the cells'
    /// and the column's packed prefixes (4 bytes at most). A whole value's entry is within its
    /// `encodedSizeBound`; a pathed change's message (a tag and a length) holds its path (a
    /// tag, a length and the step's own bytes per step), its value, operation and position.
    private static func runSizeBound(of item: ObjectStore.Resolved) -> Int {
        guard item.change.replacesWholeValue else {
            let value = item.part ?? item.change.value
            return 9 + 6 + item.change.path.encodedSizeBound + value.encodedSizeBound + 22
        }
        return 9 + item.size
    }
}

extension AppliedBatch {
    /// What a batch of these changes holds in the source of truth's queue, in bytes, for
    /// ``HostLimits/maxUnpublishedBytes``: its place in the queue, the list of any changes
    /// past the first, and each change's new value's encoded size (the size the store found
    /// while checking it; the memory a value takes is of that order).
    static func queuedBytes(of changes: BatchChanges) -> Int {
        var total = MemoryLayout<AppliedBatch>.stride + changes.first.size
        for item in changes.rest { total += MemoryLayout<ObjectStore.Resolved>.stride + item.size }
        return total
    }
}
