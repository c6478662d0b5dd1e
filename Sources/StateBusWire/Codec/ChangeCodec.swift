/// The `Change` message (a view's write, version 1 and 2) by hand.
///
/// Written as protobuf's deterministic encoding writes it (fields in order, map entries by
/// key when asked, `value` always present, `expected_version` whenever set), so a write's
/// digest (the host's way to know a copy) is the same whichever side encoded it.
package enum ChangeCodec {
    /// Writes one `Change` body.
    package static func write(_ change: PropertyChange, into writer: inout WireWriter, sortedKeys: Bool = false) {
        writer.tag(1, .lengthDelimited)
        writer.appendLengthPrefixed(string: change.property)
        PathCodec.write(change.path, field: 2, into: &writer, sortedKeys: sortedKeys)
        writer.field(3, message: { ValueCodec.write(change.value, into: &$0, sortedKeys: sortedKeys) })
        if let expected = change.expectedVersion {
            writer.tag(4, .varint)
            writer.varint(expected)
        }
        writer.field(5, varint: PathCodec.number(of: change.operation))
        writer.field(6, varint: UInt64(UInt32(clamping: change.position)))
    }

    /// The deterministic bytes of one change (for digests).
    package static func deterministicBytes(_ change: PropertyChange) -> [UInt8] {
        var writer = WireWriter(capacity: 32)
        write(change, into: &writer, sortedKeys: true)
        return writer.bytes
    }

    /// Reads one `Change` body, refusing (`.unsupported`) anything but the fields this
    /// protocol defines, anywhere in it: the general decoder then says what was wrong.
    /// - Parameter depth: the `Change` message's own depth.
    package static func read(_ reader: inout WireReader, depth: Int) throws(WireDecodingError) -> PropertyChange {
        var property = ""
        var components: [PathComponent] = []
        var value = Value.null
        var expected: UInt64?
        var operation = ElementOperation.replace
        var position = 0
        while let (field, type) = try reader.nextField() {
            switch field {
            case 1:
                try reader.expect(type, .lengthDelimited, field: field)
                property = try reader.string()
            case 2:
                try reader.expect(type, .lengthDelimited, field: field)
                var step = try reader.nested()
                components.append(try PathCodec.read(&step, depth: depth + 1, strict: true))
            case 3:
                try reader.expect(type, .lengthDelimited, field: field)
                var body = try reader.nested()
                value = try ValueCodec.read(&body, depth: depth + 1, strict: true)
            case 4:
                try reader.expect(type, .varint, field: field)
                expected = try reader.varint()
            case 5:
                try reader.expect(type, .varint, field: field)
                guard let known = PathCodec.operation(try reader.varint()) else { throw .unsupported("an element operation this host does not know") }
                operation = known
            case 6:
                try reader.expect(type, .varint, field: field)
                position = Int(try reader.varint32())
            default:
                throw .unsupported("an unknown field \(field) in a change")
            }
        }
        var change = PropertyChange(property, at: ValuePath(components), to: value, expectedVersion: expected)
        change.operation = operation
        change.position = position
        return change
    }
}
