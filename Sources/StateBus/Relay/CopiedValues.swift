import StateBusWire

/// The values of a relay's copy of one object, by property index, with each property's
/// version and the sequence they reflect: what its ``ObjectFollower`` applies the upstream's
/// batches to, and what the relay serves as a snapshot.
struct CopiedValues: FollowedCopy {
    private(set) var values: [Value] = []
    private(set) var versions: [UInt64] = []
    private(set) var sequence: UInt64 = 0
    /// Where the elements of keyed collections in `values` sit, by property index: kept by
    /// the element operations applied in place, dropped by any other change of the property.
    private var elementPositions: [Int: ElementPositions] = [:]

    /// What applying collects: the changes applied. (Not `Void`: every zero-sized value
    /// has one address, so ThreadSanitizer takes two relays' `inout Void` for a race.)
    struct Context {
        var changes = 0
    }

    var propertyCount: Int { values.count }

    /// Takes a complete snapshot.
    mutating func take(_ snapshot: IncomingSnapshot) {
        values = snapshot.values
        versions = snapshot.versions
        sequence = snapshot.sequence
        elementPositions.removeAll()
    }

    mutating func apply(_ batch: UpdateRunReader.Batch, _ changes: [IndexedChange], context: inout Context) -> Bool {
        for change in changes {
            context.changes += 1
            // The positions go with any change but one made through them.
            var positions = elementPositions.removeValue(forKey: change.property)
            if change.replacesWholeValue {
                values[change.property] = change.value
            } else if values[change.property].applyElementOperation(
                change.operation, change.value, at: change.path, position: change.position, positions: &positions) != nil
            {
                // An element found through the positions and changed where it is: the cost of
                // a change to one element of a large collection is the element's.
                elementPositions[change.property] = positions
            } else {
                // The upstream only publishes paths that lead into the value; one that does
                // not means the copy is wrong, so it is taken again.
                guard
                    let updated = try? values[change.property].applying(
                        change.operation, change.value, at: change.path, position: change.position)
                else { return false }
                values[change.property] = updated
            }
            versions[change.property] = batch.sequence
        }
        sequence = batch.sequence
        return true
    }
}
