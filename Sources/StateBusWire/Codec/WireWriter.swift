/// Writes the protocol buffers wire format by hand, for the messages on the hot paths
/// (runs of updates, snapshot parts, writes and their replies).
///
/// swift-protobuf's generated code is general and correct, and costs a few microseconds per
/// message in generic machinery; the hot messages are written here field by field instead,
/// into one growing buffer, in exactly the form protobuf defines (tests decode every shape
/// with the generated code). Everything else keeps the generated code.
package struct WireWriter: Sendable {
    /// The bytes written so far.
    package internal(set) var bytes: [UInt8]

    /// Creates an empty writer.
    /// - Parameter capacity: bytes to reserve.
    package init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Empties the writer, keeping its storage for the next message.
    package mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    /// How many bytes are written.
    package var count: Int { bytes.count }

    /// Whether nothing is written.
    package var isEmpty: Bool { bytes.isEmpty }

    // MARK: Scalars

    /// A base-128 varint.
    @inline(__always)
    package mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    /// A signed value in protobuf's zigzag form (`sint64`).
    @inline(__always)
    package mutating func zigzag(_ value: Int64) {
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// Eight little-endian bytes (`fixed64`, `double`).
    @inline(__always)
    package mutating func fixed64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// A field's key: its number and wire type.
    @inline(__always)
    package mutating func tag(_ field: UInt32, _ type: WireType) {
        varint(UInt64(field << 3 | type.rawValue))
    }

    // MARK: Fields

    /// A varint field, left out when zero (proto3's default).
    @inline(__always)
    package mutating func field(_ number: UInt32, varint value: UInt64) {
        guard value != 0 else { return }
        tag(number, .varint)
        varint(value)
    }

    /// A bool field, left out when false.
    @inline(__always)
    package mutating func field(_ number: UInt32, bool value: Bool) {
        guard value else { return }
        tag(number, .varint)
        bytes.append(1)
    }

    /// A `fixed64` field, left out when zero.
    package mutating func field(_ number: UInt32, fixed64 value: UInt64) {
        guard value != 0 else { return }
        tag(number, .fixed64)
        fixed64(value)
    }

    /// A string field, left out when empty.
    @inline(__always)
    package mutating func field(_ number: UInt32, string value: String) {
        guard !value.isEmpty else { return }
        tag(number, .lengthDelimited)
        appendLengthPrefixed(string: value)
    }

    /// A bytes field, left out when empty.
    package mutating func field(_ number: UInt32, bytes value: some Collection<UInt8>) {
        guard !value.isEmpty else { return }
        tag(number, .lengthDelimited)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// The length and UTF-8 of a string (one element of a repeated string, or a field's body).
    @inline(__always)
    package mutating func appendLengthPrefixed(string value: String) {
        var value = value
        value.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    /// A length-delimited field whose body `body` writes: the length is fixed up afterwards,
    /// so the body is written once, in place (moved only when it is 128 bytes or more).
    @inline(__always)
    package mutating func field(_ number: UInt32, message body: (inout WireWriter) throws -> Void) rethrows {
        tag(number, .lengthDelimited)
        try lengthPrefixed(body)
    }

    /// A length-prefixed body written by `body` (see ``field(_:message:)``).
    package mutating func lengthPrefixed(_ body: (inout WireWriter) throws -> Void) rethrows {
        let lengthAt = bytes.count
        bytes.append(0)
        try body(&self)
        let length = bytes.count - lengthAt - 1
        if length < 0x80 {
            bytes[lengthAt] = UInt8(length)
            return
        }
        var prefix = WireWriter(capacity: 10)
        prefix.varint(UInt64(length))
        bytes.replaceSubrange(lengthAt..<(lengthAt + 1), with: prefix.bytes)
    }

    /// A packed repeated field whose elements another writer holds, left out when empty.
    package mutating func field(_ number: UInt32, packed elements: WireWriter) {
        guard !elements.isEmpty else { return }
        tag(number, .lengthDelimited)
        varint(UInt64(elements.count))
        bytes.append(contentsOf: elements.bytes)
    }

    /// Appends bytes encoded before (a message, or fields already tagged).
    package mutating func append(contentsOf other: [UInt8]) {
        bytes.append(contentsOf: other)
    }

    /// Appends what another writer holds (fields already tagged).
    package mutating func append(_ other: WireWriter) {
        bytes.append(contentsOf: other.bytes)
    }
}

/// The wire types of protocol buffers.
package enum WireType: UInt32, Sendable {
    case varint = 0
    case fixed64 = 1
    case lengthDelimited = 2
    case startGroup = 3
    case endGroup = 4
    case fixed32 = 5
}
