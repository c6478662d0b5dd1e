import StateBusWire

/// A shared object a host serves: its name and its synced properties.
public struct ObjectDefinition: Sendable {
    /// The object's name, unique per host; views bind it by this name.
    public let name: String
    /// The synced properties, in declaration order.
    public let properties: [PropertyDefinition]
    let propertyIndex: [String: Int]

    /// Declares an object.
    /// - Parameters:
    ///   - name: the object's name.
    ///   - properties: its synced properties; names must be unique.
    public init(_ name: String, properties: [PropertyDefinition]) {
        self.name = name
        self.properties = properties
        var index: [String: Int] = [:]
        for (position, property) in properties.enumerated() where index[property.name] == nil {
            index[property.name] = position
        }
        propertyIndex = index
    }

    /// The property of that name, if the object has one.
    public func property(named name: String) -> PropertyDefinition? {
        propertyIndex[name].map { properties[$0] }
    }

    /// The object's default state.
    public var defaultValues: [String: Value] {
        Dictionary(uniqueKeysWithValues: properties.map { ($0.name, $0.defaultValue) })
    }
}
