import StateBusWire

/// A shared object a host serves: its name, its synced properties and its actions.
public struct ObjectDefinition: Sendable {
    /// The object's name, unique per host; views bind it by this name.
    public let name: String
    /// The synced properties, in declaration order.
    public let properties: [PropertyDefinition]
    /// The methods views may call (``Action()``), in declaration order.
    public let actions: [ActionDefinition]
    let propertyIndex: [String: Int]

    /// Declares an object.
    /// - Parameters:
    ///   - name: the object's name.
    ///   - properties: its synced properties; names must be unique.
    ///   - actions: its actions; names must be unique. A host runs them only for an object
    ///     served from a model (``StateHost/init(serving:configuration:)``); otherwise a
    ///     call is answered `unknownAction`.
    public init(_ name: String, properties: [PropertyDefinition], actions: [ActionDefinition] = []) {
        self.name = name
        self.properties = properties
        self.actions = actions
        var index: [String: Int] = [:]
        for (position, property) in properties.enumerated() where index[property.name] == nil {
            index[property.name] = position
        }
        propertyIndex = index
    }

    /// The property of that name, if the object has one.
    public func property(named name: String) -> PropertyDefinition? {
        index(of: name).map { properties[$0] }
    }

    /// The index of the property of that name: its place in ``properties``, which is also
    /// its index in the welcome's property table, in snapshots and in runs of updates.
    public func index(of name: String) -> Int? {
        // A few properties: comparing names beats hashing one.
        if properties.count <= 8 { return properties.firstIndex { $0.name == name } }
        return propertyIndex[name]
    }

    /// The action of that name, if the object has one.
    public func action(named name: String) -> ActionDefinition? {
        actions.first { $0.name == name }
    }

    /// The object's default state.
    public var defaultValues: [String: Value] {
        Dictionary(uniqueKeysWithValues: properties.map { ($0.name, $0.defaultValue) })
    }

    /// The same object, starting from these values instead of its defaults (a standby host
    /// taking over starts from the state it followed). A value that does not fit its
    /// property's type keeps the default; names the object does not have are ignored.
    package func startingFrom(_ values: [String: Value]) -> ObjectDefinition {
        let started = properties.map { property in
            values[property.name].flatMap { try? property.startingFrom($0) } ?? property
        }
        return ObjectDefinition(name, properties: started, actions: actions)
    }
}
