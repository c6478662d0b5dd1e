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

// The same operations on the store itself: found through the element positions and applied
// where the list is, for a batch of one change.

extension ObjectStore {
    /// What an element operation does to the list, checked: the canonical element, where it
    /// goes, and the property's size after it.
    private struct ElementEdit {
        var operation: ElementOperation
        /// The element to insert or to put in place of the old one (`.null`: remove, move).
        var value: Value
        /// `[id]` of the element, or the root for an insert.
        var path: ValuePath
        var size: Int
        var part: Value?
    }

    /// A batch of one change that is an element operation on a keyed collection, checked
    /// and applied in place: the element is found through ``elementPositions`` (built with
    /// one walk of the list the first time), and the list is changed where it is instead of
    /// copied, so the cost is the element's, not the collection's.
    ///
    /// It takes only what it can publish without the whole value, and decides nothing on its
    /// own: any change it does not take, or that a check would refuse, returns `nil` with
    /// nothing changed, and goes the general way (``validate(_:fromView:limits:)``), which
    /// applies it or says why not.
    mutating func applyElementInPlace(_ change: PropertyChange, fromView: Bool, limits: HostLimits) -> (sequence: UInt64, resolved: Resolved)? {
        guard !change.replacesWholeValue, let index = definition.index(of: change.property) else { return nil }
        let property = definition.properties[index]
        // Read-only properties and validators of the whole collection: the general way.
        guard let normalizeElement = property.normalizeElement, !fromView || (property.isWritable && property.validators.isEmpty) else { return nil }
        if let expected = change.expectedVersion, expected != versions[index] { return nil }
        // Taken out of the table while in use, so that an insert adds to them in place.
        guard let positions = takePositions(of: index) else { return nil }
        guard let edit = elementEdit(change, of: index, positions: positions, normalizeElement, fromView ? property.elementValidator : nil) else {
            keep(positions, of: index)
            return nil
        }
        let resolved = Resolved(property: index, change: change, newValue: .null, size: edit.size, part: edit.part)
        do {
            try checkSize(of: resolved, limits: limits)
        } catch {
            keep(positions, of: index)
            return nil
        }
        guard
            let sequence = applyElementOperation(
                edit.operation, edit.value, at: edit.path, position: change.position, to: index, positions: consume positions, size: edit.size)
        else { return nil }
        return (sequence, resolved)
    }

    /// Checks an element operation as ``keyedWrite(_:of:_:)`` does, without building the new
    /// list; `nil` for anything the general way must decide.
    private func elementEdit(
        _ change: PropertyChange, of property: Int, positions: ElementPositions,
        _ normalizeElement: @Sendable (Value) throws(StateBusError) -> Value, _ elementValidator: ElementValidator?
    ) -> ElementEdit? {
        guard case .list(let items) = values[property] else { return nil }
        /// The position of the element `[id]` names, checked against the list.
        func position(of id: Value) -> Int? {
            guard let index = positions.position(of: id), index < items.count, items[index].elementID == id else { return nil }
            return index
        }
        let current = sizes[property]
        switch (change.operation, change.path.components.first) {
        case (.insert, nil):
            // Published as the element with its id: an element without one goes the general way.
            guard change.value.elementID != nil, let element = try? normalizeElement(change.value), let id = element.elementID,
                positions.position(of: id) == nil, elementValidator?.check(element) == nil
            else { return nil }
            return ElementEdit(operation: .insert, value: element, path: .root, size: current + element.encodedSizeBound, part: element)
        case (.remove, .id(let id)?), (.move, .id(let id)?):
            guard change.path.components.count == 1, let index = position(of: id) else { return nil }
            let size = change.operation == .remove ? current - items[index].encodedSizeBound : current
            return ElementEdit(operation: change.operation, value: .null, path: change.path, size: size, part: nil)
        case (.replace, .id(let id)?):
            guard let index = position(of: id) else { return nil }
            let rest = ValuePath(Array(change.path.components.dropFirst()))
            guard let changed = try? items[index].setting(change.value, at: rest), changed.elementID == id,
                let element = try? normalizeElement(changed), element.elementID == id, elementValidator?.check(element) == nil,
                let part = element[rest]
            else { return nil }
            return ElementEdit(
                operation: .replace, value: element, path: ValuePath([.id(id)]),
                size: current + element.encodedSizeBound - items[index].encodedSizeBound, part: part)
        default:
            return nil
        }
    }
}
