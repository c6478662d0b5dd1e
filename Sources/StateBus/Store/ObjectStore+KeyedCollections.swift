import StateBusWire

// Operations on one element of a keyed collection, checked in the element's size: resolved
// into a new list for a batch's general way, or applied where the list is for a batch of one
// change.

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

    /// What an element operation does to a list, checked, before the list changes.
    struct CheckedElementOperation {
        enum Kind {
            case insert(at: Int)
            case remove(at: Int)
            case move(from: Int, to: Int)
            case replace(at: Int)
        }

        var kind: Kind
        /// The element inserted, or put in place of the old one, normalised.
        var element: Value?
        /// How much the collection's size bound changes.
        var sizeChange: Int
        /// What the batch publishes: the inserted element, or the part at a replace's path.
        var part: Value?
    }

    /// Resolves an operation on one element of a keyed collection (the property's value a
    /// list of elements with ids); `nil` when the change is not such an operation.
    static func keyedWrite(
        _ change: PropertyChange, of current: Value, _ normalizeElement: @Sendable (Value) throws(StateBusError) -> Value
    ) throws -> KeyedWrite? {
        guard case .list(var items) = current,
            let edit = try elementEdit(change, in: items, find: { id in items.index(of: .id(id)) }, normalizeElement)
        else { return nil }
        switch edit.kind {
        case .insert(let index): items.insert(edit.element!, at: index)
        case .remove(let index): items.remove(at: index)
        case .move(let from, let to): items.insert(items.remove(at: from), at: to)
        case .replace(let index): items[index] = edit.element!
        }
        return KeyedWrite(collection: .list(items), sizeChange: edit.sizeChange, element: edit.element, part: edit.part)
    }

    /// Checks an operation on one element of `items` without changing them; `nil` when the
    /// change is not such an operation (or names no element: the general way says why).
    /// - Parameter find: the position of the element with this id.
    /// - Throws: an inserted id already in the list; an element that does not normalise.
    static func elementEdit(
        _ change: PropertyChange, in items: [Value], find: (Value) -> Int?, _ normalizeElement: @Sendable (Value) throws(StateBusError) -> Value
    ) throws -> CheckedElementOperation? {
        switch (change.operation, change.path.components.first) {
        case (.insert, nil):
            let element = try normalizeElement(change.value)
            try checkNesting(of: element, levelsAbove: 2, object: "", property: change.property)
            if let id = element.elementID, find(id) != nil {
                throw ValuePathError(path: change.path.description, reason: "an element with id \(id) is already in the list; ids must be unique")
            }
            return CheckedElementOperation(
                kind: .insert(at: min(max(0, change.position), items.count)), element: element, sizeChange: element.encodedSizeBound,
                part: element)
        case (.remove, .id(let id)?), (.move, .id(let id)?):
            guard change.path.components.count == 1, let index = find(id) else { return nil }
            if change.operation == .move {
                // Where it goes in the list without it.
                return CheckedElementOperation(kind: .move(from: index, to: min(max(0, change.position), items.count - 1)), sizeChange: 0)
            }
            return CheckedElementOperation(kind: .remove(at: index), sizeChange: -items[index].encodedSizeBound)
        case (.replace, .id(let id)?):
            guard let index = find(id) else { return nil }  // the general path says why
            let rest = ValuePath(Array(change.path.components.dropFirst()))
            let changed = try items[index].setting(change.value, at: rest)
            guard changed.elementID == id else { return nil }  // the general path refuses it, saying why
            let element = try normalizeElement(changed)
            try checkNesting(of: element, levelsAbove: 2, object: "", property: change.property)
            return CheckedElementOperation(
                kind: .replace(at: index), element: element, sizeChange: element.encodedSizeBound - items[index].encodedSizeBound,
                part: element[rest])
        default:
            return nil
        }
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
        guard let edit = checkedEdit(change, of: index, positions: positions, normalizeElement, fromView ? property.elementValidator : nil) else {
            keep(positions, of: index)
            return nil
        }
        let size = sizes[index] + edit.sizeChange
        let resolved = Resolved(property: index, change: change, newValue: .null, size: size, part: edit.part)
        do {
            try checkSize(of: resolved, limits: limits)
        } catch {
            keep(positions, of: index)
            return nil
        }
        // The operation as the list's own element operation takes it: the element in place of
        // `[id]` for a replace, so that the normalised element is what is stored.
        let (operation, value, path): (ElementOperation, Value, ValuePath) =
            switch edit.kind {
            case .insert: (.insert, edit.element!, .root)
            case .remove, .move: (change.operation, .null, change.path)
            case .replace: (.replace, edit.element!, ValuePath(Array(change.path.components.prefix(1))))
            }
        guard
            let sequence = applyElementOperation(
                operation, value, at: path, position: change.position, to: index, positions: consume positions, size: size)
        else { return nil }
        return (sequence, resolved)
    }

    /// ``elementEdit(_:in:find:_:)`` through the positions, for the in-place way: `nil` for
    /// whatever it must leave to the general way (a refusal, which the general way words; an
    /// insert without an id, or a replace whose part the element drops, which it publishes
    /// as the whole value; a normalised element whose id changed).
    private func checkedEdit(
        _ change: PropertyChange, of property: Int, positions: ElementPositions,
        _ normalizeElement: @Sendable (Value) throws(StateBusError) -> Value, _ elementValidator: ElementValidator?
    ) -> CheckedElementOperation? {
        guard case .list(let items) = values[property] else { return nil }
        let find = { (id: Value) -> Int? in
            guard let index = positions.position(of: id), index < items.count, items[index].elementID == id else { return nil }
            return index
        }
        guard let edit = try? Self.elementEdit(change, in: items, find: find, normalizeElement) else { return nil }
        switch edit.kind {
        case .insert: guard change.value.elementID != nil, edit.element?.elementID != nil else { return nil }
        case .replace: guard edit.part != nil, edit.element?.elementID == change.path.components.first.flatMap(\.elementIDStep) else { return nil }
        case .remove, .move: break
        }
        if let element = edit.element, elementValidator?.check(element) != nil { return nil }
        return edit
    }
}

extension PathComponent {
    /// The id an `.id` step names.
    fileprivate var elementIDStep: Value? {
        if case .id(let id) = self { id } else { nil }
    }
}
