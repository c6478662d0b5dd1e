/// One change to a property: a new value for the whole property, or for one part of it; or,
/// for a keyed collection, one element inserted, removed or moved.
public struct PropertyChange: Sendable, Hashable, CustomStringConvertible {
    /// The property's name.
    public var property: String
    /// Where inside the property's value the new value goes; `.root` replaces it all.
    public var path: ValuePath
    /// The new value (of the whole property, or of the part at `path`).
    public var value: Value
    /// Compare-and-set: apply only if the property's version still equals this.
    public var expectedVersion: UInt64?
    /// What the change does at ``path`` (default ``ElementOperation/replace``).
    public var operation: ElementOperation = .replace
    /// Where an inserted or moved element goes (``ElementOperation/insert``, ``ElementOperation/move``).
    public var position: Int = 0

    /// Creates a change.
    /// - Parameters:
    ///   - property: the property's name.
    ///   - path: where inside the value; `.root` for the whole property.
    ///   - value: the new value.
    ///   - expectedVersion: the version the writer saw, for compare-and-set.
    public init(_ property: String, at path: ValuePath = .root, to value: Value, expectedVersion: UInt64? = nil) {
        self.property = property
        self.path = path
        self.value = value
        self.expectedVersion = expectedVersion
    }

    /// An element operation on a list: insert `element` into the list at `path` (`.root`:
    /// the property itself) at `position`; remove or move the element at `path` (by id:
    /// `[.id(x)]`).
    public init(_ property: String, _ operation: ElementOperation, at path: ValuePath = .root, element: Value = .null, position: Int = 0) {
        self.init(property, at: path, to: element)
        self.operation = operation
        self.position = position
    }

    /// Whether the change replaces the property's whole value.
    public var replacesWholeValue: Bool { operation == .replace && path.components.isEmpty }

    /// The property's value after this change.
    /// - Throws: ``ValuePathError`` when the path leads nowhere (such as an element another
    ///   writer removed) or the operation does not fit the value there.
    public func applied(to current: Value) throws(ValuePathError) -> Value {
        try current.applying(operation, value, at: path, position: position)
    }

    /// `property.path = value`, or `insert property[3] = value`, `remove property[id=7]`.
    public var description: String {
        let target = path.components.isEmpty ? property : "\(property).\(path)"
        switch operation {
        case .replace: return "\(target) = \(value)"
        case .insert: return "insert \(target)[\(position)] = \(value)"
        case .remove: return "remove \(target)"
        case .move: return "move \(target) to \(position)"
        }
    }
}
