import StateBusWire

// What an object's store sends: the changes of a batch, in version 1's and version 2's form.

extension ObjectStore.Resolved {
    /// What the batch publishes for this change: path writes travel as path writes and element
    /// operations as element operations, so views apply only the part that changed;
    /// whole-property writes carry the canonical value.
    var published: IndexedChange {
        switch change.operation {
        case .replace:
            if !change.path.components.isEmpty, let part = part ?? newValue[change.path] {
                return IndexedChange(property: property, path: change.path, value: part, operation: .replace, position: 0)
            }
            // A whole-property write, or a path the normalised value no longer has (a key the
            // property's type drops): the canonical whole value, so no view keeps a part the
            // host does not have (found by the fuzzer).
            return IndexedChange(property: property, value: newValue)
        case .insert:
            // The inserted element as the host holds it (canonical), found by its id.
            guard let id = change.value.elementID, let inserted = part ?? newValue[change.path.appending(.id(id))] else {
                return IndexedChange(property: property, value: newValue)
            }
            return IndexedChange(property: property, path: change.path, value: inserted, operation: .insert, position: change.position)
        case .remove, .move:
            return IndexedChange(property: property, path: change.path, value: .null, operation: change.operation, position: change.position)
        }
    }
}

extension ObjectStore {
    /// The version-1 wire changes of a batch of `definition`'s object (see
    /// ``ObjectStore/Resolved/published``).
    static func wireChanges(_ resolved: some Sequence<Resolved>, of definition: ObjectDefinition) -> [Statebus_V1_Change] {
        resolved.map { item in
            let published = item.published
            var change = Statebus_V1_Change()
            change.property = definition.properties[item.property].name
            change.path = published.path.wire
            change.value = published.value.wire
            change.operation = published.operation.wire
            change.position = UInt32(clamping: published.position)
            return change
        }
    }
}
