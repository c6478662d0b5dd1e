import Foundation
import SwiftProtobuf

// Conversion between the domain types and the generated wire messages happens here, at the
// module boundary, so nothing above StateBusWire handles `Statebus_V1_*` values directly
// except the protocol engine.

extension Value {
    /// Converts the wire form of a value.
    /// - Parameter wire: a decoded `Value` message; an unset kind reads as null.
    package init(wire: Statebus_V1_Value) {
        switch wire.kind {
        case .none, .nullValue: self = .null
        case .boolValue(let value): self = .bool(value)
        case .intValue(let value): self = .int(value)
        case .doubleValue(let value): self = .double(value)
        case .stringValue(let value): self = .string(value)
        case .bytesValue(let value): self = .bytes(value)
        case .listValue(let list): self = .list(list.items.map(Value.init(wire:)))
        case .mapValue(let map): self = .map(map.entries.mapValues(Value.init(wire:)))
        }
    }

    /// The wire form of this value.
    package var wire: Statebus_V1_Value {
        var wire = Statebus_V1_Value()
        switch self {
        case .null: wire.kind = .nullValue(.nullValue)
        case .bool(let value): wire.kind = .boolValue(value)
        case .int(let value): wire.kind = .intValue(value)
        case .double(let value): wire.kind = .doubleValue(value)
        case .string(let value): wire.kind = .stringValue(value)
        case .bytes(let value): wire.kind = .bytesValue(value)
        case .list(let items):
            var list = Statebus_V1_ListValue()
            list.items = items.map(\.wire)
            wire.kind = .listValue(list)
        case .map(let entries):
            var map = Statebus_V1_MapValue()
            map.entries = entries.mapValues(\.wire)
            wire.kind = .mapValue(map)
        }
        return wire
    }
}

extension ValueKind {
    /// The schema kind on the wire.
    package var wire: Statebus_V1_ValueKind {
        switch self {
        case .null: .null
        case .bool: .bool
        case .int: .int
        case .double: .double
        case .string: .string
        case .bytes: .bytes
        case .list: .list
        case .map: .map
        }
    }

    /// The kind named by a wire schema; `nil` for "any" or an unknown kind.
    package init?(wire: Statebus_V1_ValueKind) {
        switch wire {
        case .null: self = .null
        case .bool: self = .bool
        case .int: self = .int
        case .double: self = .double
        case .string: self = .string
        case .bytes: self = .bytes
        case .list: self = .list
        case .map: self = .map
        default: return nil
        }
    }
}

extension ValuePath {
    /// Converts the wire form of a path.
    package init(wire: [Statebus_V1_PathComponent]) {
        self.init(
            wire.map { component in
                switch component.step {
                case .index(let index): .index(Int(index))
                case .key(let key): .key(key)
                case .id(let id): .id(Value(wire: id))
                case .none: .key("")
                }
            })
    }

    /// The wire form of this path.
    package var wire: [Statebus_V1_PathComponent] {
        components.map { component in
            var wire = Statebus_V1_PathComponent()
            switch component {
            case .key(let key): wire.step = .key(key)
            case .index(let index): wire.step = .index(UInt32(clamping: index))
            case .id(let id): wire.step = .id(id.wire)
            }
            return wire
        }
    }
}

extension Value {
    /// The value in the protocol's binary form, the one the host's database stores: the
    /// encoding of a `statebus.v1.Value` message.
    /// - Throws: when the value cannot be encoded (a map key or string that is not valid UTF-8).
    package func serializedBytes() throws -> [UInt8] { try wire.serializedBytes() }

    /// Reads a value from the protocol's binary form (see ``serializedBytes()``).
    /// - Throws: when the bytes are not an encoded `statebus.v1.Value`.
    package init(serializedBytes bytes: some Collection<UInt8>) throws {
        self.init(wire: try Statebus_V1_Value(serializedBytes: Array(bytes)))
    }
}
