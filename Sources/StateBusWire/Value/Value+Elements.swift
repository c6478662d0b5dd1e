extension Value {
    /// The `"id"` field of a keyed collection's element, if it is a map that has one.
    public var elementID: Value? {
        guard case .map(let entries) = self else { return nil }
        return entries["id"]
    }

    /// A copy with `operation` applied at `path`: ``ElementOperation/replace`` sets the part
    /// there to `value` (``setting(_:at:)``); the others insert, remove or move one element of
    /// a list.
    /// - Parameters:
    ///   - operation: what to do.
    ///   - value: the new part (replace) or the element to insert (insert); unused otherwise.
    ///   - path: where: for insert, the list; for remove and move, the element (its last step
    ///     an id or an index).
    ///   - position: where an inserted or moved element goes (past the end: the end).
    /// - Throws: ``ValuePathError`` when the path leads nowhere (an element another writer
    ///   removed), the target is not a list, or an inserted element's id is already there.
    public func applying(_ operation: ElementOperation, _ value: Value, at path: ValuePath, position: Int) throws(ValuePathError) -> Value {
        switch operation {
        case .replace:
            return try setting(value, at: path)
        case .insert:
            guard case .list(var items)? = self[path] else {
                throw ValuePathError(
                    path: path.description, reason: "an insert needs a list here, found \(self[path].map { "a \($0.kind) value" } ?? "nothing")")
            }
            if let id = value.elementID, items.contains(where: { $0.elementID == id }) {
                throw ValuePathError(path: path.description, reason: "an element with id \(id) is already in the list; ids must be unique")
            }
            items.insert(value, at: Swift.min(Swift.max(0, position), items.count))
            return try setting(.list(items), at: path)
        case .remove, .move:
            guard let last = path.components.last else {
                throw ValuePathError(path: path.description, reason: "a \(operation.rawValue) needs the path of an element, not the whole value")
            }
            let listPath = ValuePath(Array(path.components.dropLast()))
            guard case .list(var items)? = self[listPath] else {
                throw ValuePathError(path: path.description, reason: "a \(operation.rawValue) needs an element of a list")
            }
            guard let index = items.index(of: last) else {
                throw ValuePathError(path: path.description, reason: Self.missing(last, in: items))
            }
            let element = items.remove(at: index)
            if operation == .move { items.insert(element, at: Swift.min(Swift.max(0, position), items.count)) }
            return try setting(.list(items), at: listPath)
        }
    }

    /// Why a step found no element: the id or index that is not there.
    static func missing(_ step: PathComponent, in items: [Value]) -> String {
        switch step {
        case .id(let id): "no element with id \(id) (another writer may have removed it)"
        case .index(let index): "index \(index) is out of range (the list has \(items.count) elements)"
        case .key(let key): "cannot use key '\(key)' on a list"
        }
    }
}

extension [Value] {
    /// The position a path step names in a list: an index in range, or the element with that id.
    public func index(of step: PathComponent) -> Int? {
        switch step {
        case .index(let index): indices.contains(index) ? index : nil
        case .id(let id): firstIndex { $0.elementID == id }
        case .key: nil
        }
    }
}
