import StateBusWire

// The schemas a welcome carries.

extension PropertyDefinition {
    /// The property's schema, as sent in the welcome.
    var schema: Statebus_V1_PropertySchema {
        var schema = Statebus_V1_PropertySchema()
        schema.name = name
        schema.kind = kind?.wire ?? .any
        schema.typeName = typeName
        schema.writable = isWritable
        schema.persisted = isPersisted
        schema.optional = isOptional
        return schema
    }
}

extension ObjectDefinition {
    /// The object's schema, as sent in the welcome.
    var schema: Statebus_V1_ObjectSchema {
        var schema = Statebus_V1_ObjectSchema()
        schema.name = name
        schema.properties = properties.map(\.schema)
        return schema
    }
}
