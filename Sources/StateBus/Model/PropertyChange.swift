import StateBusWire

/// One change to a property: a new value for the whole property, or for one part of it.
public struct PropertyChange: Sendable, Hashable, CustomStringConvertible {
    /// The property's name.
    public var property: String
    /// Where inside the property's value the new value goes; `.root` replaces it all.
    public var path: ValuePath
    /// The new value (of the whole property, or of the part at `path`).
    public var value: Value
    /// Compare-and-set: apply only if the property's version still equals this.
    public var expectedVersion: UInt64?

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

    /// `property.path = value`.
    public var description: String {
        let target = path.components.isEmpty ? property : "\(property).\(path)"
        return "\(target) = \(value)"
    }
}
