import StateBusWire

// What an object's store sends: the changes of a batch and the states of a snapshot.

extension ObjectStore {
    /// The wire changes of a batch: path writes travel as path writes and element
    /// operations as element operations, so views apply only the part that changed;
    /// whole-property writes carry the canonical value.
    static func wireChanges(_ resolved: [Resolved]) -> [Statebus_V1_Change] {
        resolved.map { item in
            var change = Statebus_V1_Change()
            change.property = item.change.property
            switch item.change.operation {
            case .replace:
                if !item.change.path.components.isEmpty, let part = item.part ?? item.newValue[item.change.path] {
                    change.path = item.change.path.wire
                    change.value = part.wire
                } else {
                    // A whole-property write, or a path the normalised value no longer has (a
                    // key the property's type drops): the canonical whole value, so no view
                    // keeps a part the host does not have (found by the fuzzer).
                    change.value = item.newValue.wire
                }
            case .insert:
                // The inserted element as the host holds it (canonical), found by its id.
                guard let id = item.change.value.elementID, let inserted = item.part ?? item.newValue[item.change.path.appending(.id(id))] else {
                    change.value = item.newValue.wire
                    return change
                }
                change.operation = .insert
                change.path = item.change.path.wire
                change.value = inserted.wire
                change.position = UInt32(clamping: item.change.position)
            case .remove, .move:
                change.operation = item.change.operation.wire
                change.path = item.change.path.wire
                change.position = UInt32(clamping: item.change.position)
            }
            return change
        }
    }

    /// Every property's state, for a snapshot.
    var propertyStates: [Statebus_V1_PropertyState] {
        definition.properties.map { property in
            var state = Statebus_V1_PropertyState()
            state.name = property.name
            state.value = (values[property.name] ?? property.defaultValue).wire
            state.version = versions[property.name, default: 0]
            return state
        }
    }
}
