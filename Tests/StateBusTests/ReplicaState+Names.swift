import StateBusWire

@testable import StateBus

// `ReplicaState` driven by property names, as the tests of its rules are written: a snapshot
// of named values (the layout is their names in order), batches of named changes.

extension ReplicaState {
    /// Applies a snapshot of named values; returns the names whose shown value changed.
    mutating func applySnapshot(epoch: UInt64, sequence: UInt64, values: [String: Value], versions: [String: UInt64]) -> Set<String> {
        let names = values.keys.sorted()
        let outcome = applySnapshot(
            epoch: epoch, sequence: sequence, layout: PropertyLayout(names: names, kinds: []), values: names.map { values[$0]! },
            versions: names.map { versions[$0] ?? 0 })
        switch outcome {
        case .all: return Set(names)
        case .some(let changed): return changed
        }
    }

    /// Applies a batch of named changes (to properties of the last snapshot), as the engine
    /// does: straight into the arrays when no pending write shows, else the general way.
    mutating func applyBatch(
        sequence: UInt64, changes: [PropertyChange], origin: String, writeID: UInt64, myViewID: String, changed: inout Set<String>
    ) {
        var layout = self.layout
        let indexed = changes.map { change in
            IndexedChange(
                property: layout.index(of: change.property) ?? Int.max, path: change.path, value: change.value, operation: change.operation,
                position: change.position)
        }
        if isPlain {
            var tracker: ChangeTracker? = ChangeTracker()
            for change in indexed { _ = applyPlain(change, sequence: sequence, tracker: &tracker) }
            finishPlainBatch(sequence: sequence)
            for index in tracker?.indexes ?? [] { changed.insert(layout.names[index]) }
        } else {
            _ = applyBatch(sequence: sequence, changes: indexed, origin: origin, writeID: writeID, myViewID: myViewID, changed: &changed)
        }
    }
}
