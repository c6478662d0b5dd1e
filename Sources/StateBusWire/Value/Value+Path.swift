extension Value {
    /// The part of this value at `path`, or `nil` when the path leads nowhere.
    public subscript(path: ValuePath) -> Value? {
        var current = self
        for component in path.components {
            switch (component, current) {
            case (.key(let key), .map(let entries)):
                guard let next = entries[key] else { return nil }
                current = next
            case (.index(let index), .list(let items)):
                guard items.indices.contains(index) else { return nil }
                current = items[index]
            case (.id(let id), .list(let items)):
                guard let found = items.first(where: { $0.elementID == id }) else { return nil }
                current = found
            default:
                return nil
            }
        }
        return current
    }

    /// A copy with the part at `path` replaced by `newValue`.
    ///
    /// A key on a map is added or replaced; an index must already exist in its list (a
    /// path write changes one element, it does not grow the list).
    /// - Throws: ``ValuePathError`` when a step goes through something that is not a map
    ///   or list, or an index is out of range.
    public func setting(_ newValue: Value, at path: ValuePath) throws(ValuePathError) -> Value {
        try setting(newValue, at: path.components[...], fullPath: path, depth: 0)
    }

    /// Replaces the part at `path` with `newValue`. See ``setting(_:at:)``.
    public mutating func set(_ newValue: Value, at path: ValuePath) throws(ValuePathError) {
        self = try setting(newValue, at: path)
    }

    private func setting(_ newValue: Value, at rest: ArraySlice<PathComponent>, fullPath: ValuePath, depth: Int) throws(ValuePathError) -> Value {
        guard let step = rest.first else { return newValue }
        let remaining = rest.dropFirst()
        let here = ValuePath(Array(fullPath.components.prefix(depth)))
        switch (step, self) {
        case (.key(let key), .map(var entries)):
            let child = entries[key]
            if child == nil && !remaining.isEmpty {
                throw ValuePathError(
                    path: fullPath.description, reason: "'\(key)' does not exist under \(here.components.isEmpty ? "the root" : here.description)")
            }
            entries[key] = try (child ?? .null).setting(newValue, at: remaining, fullPath: fullPath, depth: depth + 1)
            return .map(entries)
        case (.index(let index), .list(var items)):
            guard items.indices.contains(index) else {
                throw ValuePathError(path: fullPath.description, reason: "index \(index) is out of range (the list has \(items.count) elements)")
            }
            items[index] = try items[index].setting(newValue, at: remaining, fullPath: fullPath, depth: depth + 1)
            return .list(items)
        case (.id(let id), .list(var items)):
            guard let index = items.firstIndex(where: { $0.elementID == id }) else {
                throw ValuePathError(path: fullPath.description, reason: Self.missing(step, in: items))
            }
            let updated = try items[index].setting(newValue, at: remaining, fullPath: fullPath, depth: depth + 1)
            guard updated.elementID == id else {
                throw ValuePathError(
                    path: fullPath.description,
                    reason:
                        "the element's id would become \(updated.elementID.map { "\($0)" } ?? "missing"), not \(id): an element keeps its id (remove it and insert another)"
                )
            }
            items[index] = updated
            return .list(items)
        case (.id(let id), _):
            throw ValuePathError(path: fullPath.description, reason: "cannot look up the element with id \(id) in a \(kind) value")
        case (.key(let key), _):
            throw ValuePathError(path: fullPath.description, reason: "cannot use key '\(key)' on a \(kind) value")
        case (.index(let index), _):
            throw ValuePathError(path: fullPath.description, reason: "cannot use index \(index) on a \(kind) value")
        }
    }
}
