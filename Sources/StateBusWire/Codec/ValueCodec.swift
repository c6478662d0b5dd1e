import Foundation

/// The `Value` message of `proto/statebus.proto`, written and read by hand (see
/// ``WireWriter``): a value's kind is a oneof, so every kind is written even when it holds
/// the default (`null`, `false`, `0`, `""`), byte for byte as swift-protobuf writes it.
package enum ValueCodec {
    /// The deepest nesting of messages read: as swift-protobuf's limit for requests
    /// (``decodingDepthLimit``), so both paths refuse the same values.
    package static let decodingDepthLimit = 64

    // MARK: Writing

    /// Writes the body of a `Value` message.
    /// - Parameter sortedKeys: map entries in key order, as protobuf's deterministic encoding
    ///   writes them (for digests); otherwise in the dictionary's order.
    package static func write(_ value: Value, into writer: inout WireWriter, sortedKeys: Bool = false) {
        switch value {
        case .null:
            writer.tag(1, .varint)
            writer.varint(0)
        case .bool(let flag):
            writer.tag(2, .varint)
            writer.varint(flag ? 1 : 0)
        case .int(let number):
            writer.tag(3, .varint)
            writer.zigzag(number)
        case .double(let number):
            writer.tag(4, .fixed64)
            writer.fixed64(number.bitPattern)
        case .string(let text):
            writer.tag(5, .lengthDelimited)
            writer.appendLengthPrefixed(string: text)
        case .bytes(let data):
            writer.tag(6, .lengthDelimited)
            writer.varint(UInt64(data.count))
            writer.append(contentsOf: data)
        case .list(let items):
            writer.field(
                7,
                message: { list in
                    for item in items {
                        list.field(1, message: { write(item, into: &$0, sortedKeys: sortedKeys) })
                    }
                })
        case .map(let entries):
            writer.field(
                8,
                message: { map in
                    func entry(_ key: String, _ item: Value) {
                        map.field(
                            1,
                            message: { body in
                                body.tag(1, .lengthDelimited)
                                body.appendLengthPrefixed(string: key)
                                body.field(2, message: { write(item, into: &$0, sortedKeys: sortedKeys) })
                            })
                    }
                    if sortedKeys {
                        for key in entries.keys.sorted() { entry(key, entries[key]!) }
                    } else {
                        for (key, item) in entries {
                            // A struct's fields are mostly plain values, whose entry's size is
                            // known before it is written: its lengths go first, with no body
                            // written through closures and its length fixed up after.
                            guard let itemSize = plainBodySize(item) else {
                                entry(key, item)
                                continue
                            }
                            let keyBytes = key.utf8.count
                            let entrySize =
                                2 + WireWriter.varintSize(UInt64(keyBytes)) + keyBytes + WireWriter.varintSize(UInt64(itemSize)) + itemSize
                            map.tag(1, .lengthDelimited)
                            map.varint(UInt64(entrySize))
                            map.tag(1, .lengthDelimited)
                            map.appendLengthPrefixed(string: key)
                            map.tag(2, .lengthDelimited)
                            map.varint(UInt64(itemSize))
                            write(item, into: &map)
                        }
                    }
                })
        }
    }

    /// The exact size of the body ``write(_:into:sortedKeys:)`` writes for a value that is
    /// not a list or a map (`nil` for those).
    @inline(__always)
    static func plainBodySize(_ value: Value) -> Int? {
        switch value {
        case .null, .bool: return 2
        case .int(let number): return 1 + WireWriter.varintSize(UInt64(bitPattern: (number << 1) ^ (number >> 63)))
        case .double: return 9
        case .string(let text):
            let count = text.utf8.count
            return 1 + WireWriter.varintSize(UInt64(count)) + count
        case .bytes(let data): return 1 + WireWriter.varintSize(UInt64(data.count)) + data.count
        case .list, .map: return nil
        }
    }

    /// The bytes of a `Value` message.
    package static func encoded(_ value: Value, sortedKeys: Bool = false) -> [UInt8] {
        var writer = WireWriter(capacity: 16)
        write(value, into: &writer, sortedKeys: sortedKeys)
        return writer.bytes
    }

    // MARK: Reading

    /// Reads the body of a `Value` message (the reader holds exactly that body).
    /// - Parameters:
    ///   - depth: how many messages deep this one is; past ``decodingDepthLimit`` the value
    ///     is refused as `.unsupported` (the general decoder then says why).
    ///   - strict: unknown fields are `.unsupported` instead of skipped (a view's write,
    ///     which the host refuses rather than store something else than was sent).
    /// - Returns: the value; a message with no kind set reads as null, as in version 1.
    package static func read(_ reader: inout WireReader, depth: Int = 1, strict: Bool = false) throws(WireDecodingError) -> Value {
        // A little short of the general decoder's limit: what comes near it is left to the
        // general decoder, so both paths refuse exactly the same values.
        guard depth <= decodingDepthLimit - 4 else { throw .unsupported("a value nested about \(decodingDepthLimit) messages deep") }
        var value = Value.null
        while let (field, type) = try reader.nextField() {
            switch field {
            case 1:
                try reader.expect(type, .varint, field: field)
                _ = try reader.varint()
                value = .null
            case 2:
                try reader.expect(type, .varint, field: field)
                value = .bool(try reader.varint() != 0)
            case 3:
                try reader.expect(type, .varint, field: field)
                value = .int(try reader.zigzag())
            case 4:
                try reader.expect(type, .fixed64, field: field)
                value = .double(Double(bitPattern: try reader.fixed64()))
            case 5:
                try reader.expect(type, .lengthDelimited, field: field)
                value = .string(try reader.string())
            case 6:
                try reader.expect(type, .lengthDelimited, field: field)
                let range = try reader.lengthDelimited()
                value = .bytes(Data(UnsafeRawBufferPointer(rebasing: reader.buffer[range])))
            case 7:
                try reader.expect(type, .lengthDelimited, field: field)
                var list = try reader.nested()
                var items: [Value] = []
                while let (itemField, itemType) = try list.nextField() {
                    guard itemField == 1 else {
                        if strict { throw .unsupported("an unknown field \(itemField) in a list") }
                        try list.skip(itemType)
                        continue
                    }
                    try list.expect(itemType, .lengthDelimited, field: itemField)
                    var item = try list.nested()
                    items.append(try read(&item, depth: depth + 2, strict: strict))
                }
                value = .list(items)
            case 8:
                try reader.expect(type, .lengthDelimited, field: field)
                var map = try reader.nested()
                // Sized once for its entries (counted first, a walk over their lengths): a
                // dictionary grown entry by entry rehashes every key at each doubling.
                var entries = [String: Value](minimumCapacity: map.countFields(1))
                while let (entryField, entryType) = try map.nextField() {
                    guard entryField == 1 else {
                        if strict { throw .unsupported("an unknown field \(entryField) in a map") }
                        try map.skip(entryType)
                        continue
                    }
                    try map.expect(entryType, .lengthDelimited, field: entryField)
                    var entry = try map.nested()
                    var key = ""
                    var item = Value.null
                    while let (part, partType) = try entry.nextField() {
                        switch part {
                        case 1:
                            try entry.expect(partType, .lengthDelimited, field: part)
                            key = try entry.string()
                        case 2:
                            try entry.expect(partType, .lengthDelimited, field: part)
                            var body = try entry.nested()
                            item = try read(&body, depth: depth + 3, strict: strict)
                        default:
                            if strict { throw .unsupported("an unknown field \(part) in a map entry") }
                            try entry.skip(partType)
                        }
                    }
                    entries[key] = item
                }
                value = .map(entries)
            default:
                // A kind from a newer protocol: version 1 reads the value as null, which a
                // write must not store (the general decoder refuses it, naming the property).
                if strict { throw .unsupported("an unknown field \(field) in a value") }
                try reader.skip(type)
            }
        }
        return value
    }
}

extension WireWriter {
    /// Appends raw bytes (a value's `Data`).
    package mutating func append(contentsOf data: Data) {
        bytes.append(contentsOf: data)
    }
}
