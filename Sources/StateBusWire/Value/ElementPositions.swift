/// Where each element of a list sits, by its id (``Value/elementID``): found with one walk of
/// the list, then looked up instead of walking the list for every element operation.
///
/// It describes one list exactly. Whoever keeps it changes that list only through
/// ``Value/applyElementOperation(_:_:at:position:positions:)`` with it, and drops it on any
/// other change of the list. The cost is a dictionary entry per element (a few tens of
/// bytes): what turns a one-element change of a 100,000-item collection from a walk of the list
/// into a lookup.
public struct ElementPositions: Sendable {
    private var positions: [Value: Int]

    /// The positions of the elements of `items` that have an id (the first one, where ids
    /// repeat, as ``Swift/Array/index(of:)`` finds it).
    public init(of items: [Value]) {
        positions = [:]
        positions.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            if let id = item.elementID, positions[id] == nil { positions[id] = index }
        }
    }

    /// The position of the element with this id, if the list has one.
    public func position(of id: Value) -> Int? { positions[id] }

    /// Records an element appended at the end of the list.
    mutating func appended(_ id: Value, at index: Int) {
        positions[id] = index
    }
}

extension Value {
    /// ``applying(_:_:at:position:)`` in place, for the element operations of a keyed
    /// collection held at the root: a change inside an element (`[id, ...]`), an insert into
    /// the list, and a remove or move of an element (`[id]`). The element is found through
    /// `positions` (built here when `nil`), and the list is changed where it is, not copied,
    /// when nothing else holds it.
    ///
    /// - Parameter positions: the positions of this list's elements, or `nil`; afterwards
    ///   the positions of the changed list, or `nil` when an insert, remove or move shifted
    ///   elements (found again with one walk, when next needed). Keep them in one place
    ///   only: a second holder makes an insert copy them.
    /// - Returns: what changed, and where (for a holder of the list as another type to repeat
    ///   it); `nil` when the operation is not one of those or would fail (an id that is not
    ///   there, an inserted id that is, a path inside the element that leads nowhere): the
    ///   list did not change, and `positions` are still its positions (or `nil`). Apply it
    ///   with ``applying(_:_:at:position:)``, which throws the reason, and drop `positions`
    ///   if that changes the list.
    public mutating func applyElementOperation(
        _ operation: ElementOperation, _ value: Value, at path: ValuePath, position: Int, positions: inout ElementPositions?
    ) -> ElementEdit? {
        guard case .list(var items) = self else { return nil }
        let components = path.components
        switch operation {
        case .replace:
            guard case .id(let id)? = components.first else { return nil }
            let found = positions ?? ElementPositions(of: items)
            guard let index = found.position(of: id), index < items.count, items[index].elementID == id else { return nil }
            let rest = ValuePath(Array(components.dropFirst()))
            guard let updated = try? items[index].setting(value, at: rest), updated.elementID == id else { return nil }
            // `items` is now the list's only holder (unless a reader holds a copy), so the
            // element is replaced in place.
            self = .null
            items[index] = updated
            self = .list(items)
            positions = found
            return .replaced(index: index, element: updated)
        case .insert:
            guard components.isEmpty else { return nil }
            let id = value.elementID
            if let id {
                // Found here, they are this list's positions whether or not the insert goes.
                if positions == nil { positions = ElementPositions(of: items) }
                guard positions?.position(of: id) == nil else { return nil }
            }
            let index = Swift.min(Swift.max(0, position), items.count)
            self = .null
            items.insert(value, at: index)
            self = .list(items)
            // Changed in place, not copied: `positions` is the only holder of its table.
            if index != items.count - 1 {
                positions = nil
            } else if let id {
                positions?.appended(id, at: index)
            }
            return .inserted(index: index, element: value)
        case .remove, .move:
            guard components.count == 1, case .id(let id) = components[0] else { return nil }
            let found = positions ?? ElementPositions(of: items)
            guard let index = found.position(of: id), index < items.count, items[index].elementID == id else { return nil }
            self = .null
            let element = items.remove(at: index)
            let edit: ElementEdit
            if operation == .move {
                let destination = Swift.min(Swift.max(0, position), items.count)
                items.insert(element, at: destination)
                edit = .moved(from: index, to: destination)
            } else {
                edit = .removed(index: index)
            }
            self = .list(items)
            positions = nil
            return edit
        }
    }
}
