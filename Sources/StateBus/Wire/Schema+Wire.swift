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
        schema.actions = actions.map(\.schema)
        return schema
    }
}

extension ActionDefinition {
    /// The action's schema, as sent in the welcome.
    var schema: Statebus_V1_ActionSchema {
        var schema = Statebus_V1_ActionSchema()
        schema.name = name
        schema.parameters = parameters.map { parameter in
            var wire = Statebus_V1_ActionParameter()
            wire.label = parameter.label
            wire.kind = parameter.kind?.wire ?? .any
            wire.typeName = parameter.typeName
            return wire
        }
        schema.resultKind = resultKind?.wire ?? .any
        schema.resultTypeName = resultTypeName
        return schema
    }

    /// An action as a welcome describes it.
    init(wire: Statebus_V1_ActionSchema) {
        self.init(
            wire.name,
            parameters: wire.parameters.map { Parameter($0.label, kind: ValueKind(wire: $0.kind), typeName: $0.typeName) },
            resultKind: ValueKind(wire: wire.resultKind), resultTypeName: wire.resultTypeName)
    }
}
