/// One change in a version-2 run or snapshot: the property by its index in the object's
/// schema, and what changes (a whole value, or a part of it, or an element operation).
package struct IndexedChange: Sendable, Hashable {
    /// The property's index in the welcome's property table.
    package var property: Int
    /// Where inside the property's value; `.root` for the whole value.
    package var path: ValuePath
    /// The new value (of the whole property, of the part at `path`, or the inserted element).
    package var value: Value
    /// What the change does at `path`.
    package var operation: ElementOperation
    /// Where an inserted or moved element goes.
    package var position: Int

    /// A whole new value for the property.
    package init(property: Int, value: Value) {
        self.property = property
        self.path = .root
        self.value = value
        self.operation = .replace
        self.position = 0
    }

    /// A change inside the property's value, or an element operation.
    package init(property: Int, path: ValuePath, value: Value, operation: ElementOperation, position: Int) {
        self.property = property
        self.path = path
        self.value = value
        self.operation = operation
        self.position = position
    }

    /// Whether it replaces the property's whole value.
    package var replacesWholeValue: Bool { operation == .replace && path.components.isEmpty }
}

/// How a value travels in a run's or a snapshot part's columns: the low three bits of its
/// cell (`property index << 3 | encoding`).
package enum CellEncoding: UInt32, Sendable {
    /// `ints`.
    case int = 0
    /// `ints`, 0 or 1.
    case bool = 1
    /// `doubles`.
    case double = 2
    /// `strings`.
    case string = 3
    /// `blobs`.
    case bytes = 4
    /// No column.
    case null = 5
    /// `values`: any value (lists, maps).
    case value = 6
    /// `pathed`: a change inside the value, or an element operation (runs only).
    case pathed = 7
}
