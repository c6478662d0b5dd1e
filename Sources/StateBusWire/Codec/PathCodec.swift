/// `PathComponent`, `ElementOperation` and `PathedChange` of `proto/statebus.proto`, by hand.
package enum PathCodec {
    /// Writes one `PathComponent` body.
    package static func write(_ component: PathComponent, into writer: inout WireWriter, sortedKeys: Bool = false) {
        switch component {
        case .key(let key):
            writer.tag(1, .lengthDelimited)
            writer.appendLengthPrefixed(string: key)
        case .index(let index):
            writer.tag(2, .varint)
            writer.varint(UInt64(UInt32(clamping: index)))
        case .id(let id):
            writer.field(3, message: { ValueCodec.write(id, into: &$0, sortedKeys: sortedKeys) })
        }
    }

    /// Writes `path` as repeated `PathComponent` in field `number`.
    package static func write(_ path: ValuePath, field number: UInt32, into writer: inout WireWriter, sortedKeys: Bool = false) {
        for component in path.components {
            writer.field(number, message: { write(component, into: &$0, sortedKeys: sortedKeys) })
        }
    }

    /// Reads one `PathComponent` body; one with no step set reads as the key `""`, as
    /// version 1 documents.
    package static func read(_ reader: inout WireReader, depth: Int, strict: Bool = false) throws(WireDecodingError) -> PathComponent {
        var component = PathComponent.key("")
        while let (field, type) = try reader.nextField() {
            switch field {
            case 1:
                try reader.expect(type, .lengthDelimited, field: field)
                component = .key(try reader.string())
            case 2:
                try reader.expect(type, .varint, field: field)
                component = .index(Int(try reader.varint32()))
            case 3:
                try reader.expect(type, .lengthDelimited, field: field)
                var body = try reader.nested()
                component = .id(try ValueCodec.read(&body, depth: depth + 1, strict: strict))
            default:
                if strict { throw .unsupported("an unknown field \(field) in a path step") }
                try reader.skip(type)
            }
        }
        return component
    }

    /// The wire number of an operation.
    package static func number(of operation: ElementOperation) -> UInt64 {
        switch operation {
        case .replace: 0
        case .insert: 1
        case .remove: 2
        case .move: 3
        }
    }

    /// The operation of a wire number; `nil` for one this protocol does not know.
    package static func operation(_ number: UInt64) -> ElementOperation? {
        switch number {
        case 0: .replace
        case 1: .insert
        case 2: .remove
        case 3: .move
        default: nil
        }
    }

    /// Writes a `PathedChange` body: the change's path, value, operation and position.
    package static func writePathed(_ change: IndexedChange, into writer: inout WireWriter) {
        write(change.path, field: 1, into: &writer)
        writer.field(2, message: { ValueCodec.write(change.value, into: &$0) })
        writer.field(3, varint: number(of: change.operation))
        writer.field(4, varint: UInt64(UInt32(clamping: change.position)))
    }

    /// Reads a `PathedChange` body for property `property`.
    package static func readPathed(_ reader: inout WireReader, property: Int) throws(WireDecodingError) -> IndexedChange {
        var components: [PathComponent] = []
        var value = Value.null
        var operation = ElementOperation.replace
        var position = 0
        while let (field, type) = try reader.nextField() {
            switch field {
            case 1:
                try reader.expect(type, .lengthDelimited, field: field)
                var step = try reader.nested()
                components.append(try read(&step, depth: 3))
            case 2:
                try reader.expect(type, .lengthDelimited, field: field)
                var body = try reader.nested()
                value = try ValueCodec.read(&body, depth: 3)
            case 3:
                try reader.expect(type, .varint, field: field)
                guard let known = Self.operation(try reader.varint()) else { throw .malformed("an element operation this view does not know") }
                operation = known
            case 4:
                try reader.expect(type, .varint, field: field)
                position = Int(try reader.varint32())
            default:
                try reader.skip(type)
            }
        }
        return IndexedChange(property: property, path: ValuePath(components), value: value, operation: operation, position: position)
    }
}
