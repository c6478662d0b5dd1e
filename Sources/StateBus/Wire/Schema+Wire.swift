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
    /// The object's schema, as sent in version 1's welcome.
    package var schema: Statebus_V1_ObjectSchema {
        var schema = Statebus_V1_ObjectSchema()
        schema.name = name
        schema.properties = properties.map(\.schema)
        schema.actions = actions.map(\.schema)
        return schema
    }
}

extension ObjectDefinition {
    /// The object's schema in version 2's welcome: its properties column by column.
    package var packedSchema: Statebus_V1_ObjectSchema {
        var schema = Statebus_V1_ObjectSchema()
        schema.name = name
        schema.actions = actions.map(\.schema)
        var table = Statebus_V1_PropertyTable()
        table.names = properties.map(\.name)
        table.kinds = properties.map { $0.kind?.wire ?? .any }
        table.flags = properties.map { ($0.isWritable ? 1 : 0) | ($0.isPersisted ? 2 : 0) | ($0.isOptional ? 4 : 0) }
        var typeIndexes: [String: UInt32] = [:]
        table.types = properties.map { property in
            if let known = typeIndexes[property.typeName] { return known }
            let index = UInt32(table.typeNames.count)
            typeIndexes[property.typeName] = index
            table.typeNames.append(property.typeName)
            return index
        }
        schema.propertyTable = table
        return schema
    }
}

extension ObjectDefinition {
    /// The schema hash of version 2's welcome from a host serving `objects` in this order
    /// (never 0, which a hello uses for "no schema").
    package static func schemaHash(of objects: [ObjectDefinition]) throws -> UInt64 {
        try HostWelcome.hash(of: objects.map(\.packedSchema))
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

extension Statebus_V1_ObjectSchema {
    /// The version-1 form of a version-2 object schema: each property of the table as a
    /// `PropertySchema` (a relay serves version-1 views from its upstream's version-2 welcome).
    var version1: Statebus_V1_ObjectSchema {
        var schema = Statebus_V1_ObjectSchema()
        schema.name = name
        schema.actions = actions
        let table = propertyTable
        schema.properties = table.names.indices.map { index in
            var property = Statebus_V1_PropertySchema()
            property.name = table.names[index]
            property.kind = index < table.kinds.count ? table.kinds[index] : .any
            let type = index < table.types.count ? Int(table.types[index]) : -1
            property.typeName = table.typeNames.indices.contains(type) ? table.typeNames[type] : ""
            let flags = index < table.flags.count ? table.flags[index] : 0
            property.writable = flags & 1 != 0
            property.persisted = flags & 2 != 0
            property.optional = flags & 4 != 0
            return property
        }
        return schema
    }
}
