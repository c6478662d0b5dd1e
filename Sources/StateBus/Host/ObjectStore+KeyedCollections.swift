import StateBusWire

// Operations on one element of a keyed collection, checked in the element's size.

extension ObjectStore {
    /// An operation on one element of a keyed collection, resolved: the collection after it,
    /// with only that element normalised, found with one walk of the list.
    struct KeyedWrite {
        /// The collection after the operation.
        var collection: Value
        /// How much the collection's size bound changes.
        var sizeChange: Int
        /// The element inserted or changed, as stored (for element validators).
        var element: Value?
        /// What the batch publishes: the inserted element, or the part at a replace's path.
        var part: Value?
    }

    /// Resolves an operation on one element of a keyed collection (the property's value a
    /// list of elements with ids); `nil` when the change is not such an operation.
    static func keyedWrite(
        _ change: PropertyChange, of current: Value, _ normalizeElement: @Sendable (Value) throws(StateBusError) -> Value
    ) throws -> KeyedWrite? {
        guard case .list(var items) = current else { return nil }
        switch (change.operation, change.path.components.first) {
        case (.insert, nil):
            let element = try normalizeElement(change.value)
            if let id = element.elementID, items.contains(where: { $0.elementID == id }) {
                throw ValuePathError(path: change.path.description, reason: "an element with id \(id) is already in the list; ids must be unique")
            }
            items.insert(element, at: min(max(0, change.position), items.count))
            return KeyedWrite(collection: .list(items), sizeChange: element.encodedSizeBound, element: element, part: element)
        case (.remove, .id(let id)?), (.move, .id(let id)?):
            guard change.path.components.count == 1, let index = items.index(of: .id(id)) else { return nil }
            let element = items.remove(at: index)
            if change.operation == .move {
                items.insert(element, at: min(max(0, change.position), items.count))
                return KeyedWrite(collection: .list(items), sizeChange: 0)
            }
            return KeyedWrite(collection: .list(items), sizeChange: -element.encodedSizeBound)
        case (.replace, .id(let id)?):
            guard let index = items.index(of: .id(id)) else { return nil }  // the general path says why
            let rest = ValuePath(Array(change.path.components.dropFirst()))
            let changed = try items[index].setting(change.value, at: rest)
            guard changed.elementID == id else { return nil }  // the general path refuses it, saying why
            let element = try normalizeElement(changed)
            let sizeChange = element.encodedSizeBound - items[index].encodedSizeBound
            items[index] = element
            return KeyedWrite(collection: .list(items), sizeChange: sizeChange, element: element, part: element[rest])
        default:
            return nil
        }
    }
}
