import Foundation
import StateBus
import StateBusWire
import SwiftProtobuf

// The wire schemas of the fuzzed objects, for the replica side's stand-in host: the host's
// own conversion (`ObjectDefinition.packedSchema`, `HostWelcome.hash(of:)`) is internal to
// StateBus, so it is written again here, and `CorpusWriter` checks the copy against a real
// host's welcome (a host that changes its encoding makes the corpus writer fail, not the
// stand-in drift from it unnoticed).

extension FuzzObjects {
    /// An object's schema as a version-1 welcome lists it: one `PropertySchema` per property.
    static func schema(of object: ObjectDefinition) -> Statebus_V1_ObjectSchema {
        var schema = Statebus_V1_ObjectSchema()
        schema.name = object.name
        schema.properties = object.properties.map { property in
            var wire = Statebus_V1_PropertySchema()
            wire.name = property.name
            wire.kind = property.kind?.wire ?? .any
            wire.typeName = property.typeName
            wire.writable = property.isWritable
            wire.persisted = property.isPersisted
            wire.optional = property.isOptional
            return wire
        }
        return schema
    }

    /// An object's schema as a version-2 welcome lists it: its properties column by column
    /// (`PropertyTable`), in the order that gives them their indexes.
    static func packedSchema(of object: ObjectDefinition) -> Statebus_V1_ObjectSchema {
        var schema = Statebus_V1_ObjectSchema()
        schema.name = object.name
        var table = Statebus_V1_PropertyTable()
        table.names = object.properties.map(\.name)
        table.kinds = object.properties.map { $0.kind?.wire ?? .any }
        table.flags = object.properties.map { ($0.isWritable ? 1 : 0) | ($0.isPersisted ? 2 : 0) | ($0.isOptional ? 4 : 0) }
        var typeIndexes: [String: UInt32] = [:]
        table.types = object.properties.map { property in
            if let known = typeIndexes[property.typeName] { return known }
            let index = UInt32(table.typeNames.count)
            typeIndexes[property.typeName] = index
            table.typeNames.append(property.typeName)
            return index
        }
        schema.propertyTable = table
        return schema
    }

    /// The version-2 schema hash of a host serving `objects` in this order: FNV-1a (64-bit)
    /// over their encoded packed schemas, never 0 (a hello's "no schema").
    static func schemaHash(of objects: [ObjectDefinition]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for object in objects {
            let bytes: [UInt8] = (try? packedSchema(of: object).serializedBytes()) ?? []
            for byte in bytes {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01b3
            }
        }
        return hash == 0 ? 1 : hash
    }
}
