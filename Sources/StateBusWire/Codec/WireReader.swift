/// Reads the protocol buffers wire format by hand over bytes in place (a received ZeroMQ
/// frame), for the hot messages ``WireWriter`` writes.
///
/// Every read is bounds-checked and throws ``WireDecodingError`` on truncated or malformed
/// input: bytes from the network never crash a process. Unknown fields are skipped, as
/// protobuf requires; a decoder that must refuse them (a view's write) asks
/// ``sawUnknownField``.
package struct WireReader {
    /// The message's bytes; valid only while the caller holds them.
    package let buffer: UnsafeRawBufferPointer
    /// The next byte to read.
    package var position: Int
    /// The end of this message (a nested message's reader ends at its length).
    package let end: Int

    /// Reads `buffer` whole.
    package init(_ buffer: UnsafeRawBufferPointer) {
        self.buffer = buffer
        position = 0
        end = buffer.count
    }

    /// Reads `buffer[range]`.
    package init(_ buffer: UnsafeRawBufferPointer, range: Range<Int>) {
        self.buffer = buffer
        position = range.lowerBound
        end = range.upperBound
    }

    /// Whether every byte has been read.
    @inline(__always)
    package var isAtEnd: Bool { position >= end }

    // MARK: Scalars

    /// A base-128 varint of at most ten bytes.
    @inline(__always)
    package mutating func varint() throws(WireDecodingError) -> UInt64 {
        guard position < end else { throw .truncated }
        let first = buffer[position]
        position += 1
        if first < 0x80 { return UInt64(first) }
        var value = UInt64(first & 0x7F)
        var shift: UInt64 = 7
        while true {
            guard position < end else { throw .truncated }
            let byte = buffer[position]
            position += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
            guard shift < 70 else { throw .malformed("a varint longer than ten bytes") }
        }
    }

    /// A `uint32` varint (the upper bits of a longer one are dropped, as protobuf does).
    @inline(__always)
    package mutating func varint32() throws(WireDecodingError) -> UInt32 {
        UInt32(truncatingIfNeeded: try varint())
    }

    /// A zigzag `sint64`.
    @inline(__always)
    package mutating func zigzag() throws(WireDecodingError) -> Int64 {
        let raw = try varint()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    /// Eight little-endian bytes.
    @inline(__always)
    package mutating func fixed64() throws(WireDecodingError) -> UInt64 {
        guard end - position >= 8 else { throw .truncated }
        let value = buffer.loadUnaligned(fromByteOffset: position, as: UInt64.self)
        position += 8
        return UInt64(littleEndian: value)
    }

    /// Four little-endian bytes.
    package mutating func fixed32() throws(WireDecodingError) -> UInt32 {
        guard end - position >= 4 else { throw .truncated }
        let value = buffer.loadUnaligned(fromByteOffset: position, as: UInt32.self)
        position += 4
        return UInt32(littleEndian: value)
    }

    // MARK: Fields

    /// The next field's number and wire type, or `nil` at the end of the message.
    @inline(__always)
    package mutating func nextField() throws(WireDecodingError) -> (number: UInt32, type: WireType)? {
        guard position < end else { return nil }
        let key = try varint()
        guard let type = WireType(rawValue: UInt32(truncatingIfNeeded: key & 7)), key >> 3 != 0, key >> 3 <= 0x1FFF_FFFF else {
            throw .malformed("a field key \(key) that protobuf does not allow")
        }
        return (UInt32(truncatingIfNeeded: key >> 3), type)
    }

    /// The range of a length-delimited field's body, which is then skipped.
    @inline(__always)
    package mutating func lengthDelimited() throws(WireDecodingError) -> Range<Int> {
        let length = try varint()
        guard length <= UInt64(end - position) else { throw .truncated }
        let start = position
        position += Int(length)
        return start..<position
    }

    /// A reader of a nested message (a length-delimited field's body).
    @inline(__always)
    package mutating func nested() throws(WireDecodingError) -> WireReader {
        WireReader(buffer, range: try lengthDelimited())
    }

    /// A string field's body, checked to be UTF-8 as protobuf requires.
    @inline(__always)
    package mutating func string() throws(WireDecodingError) -> String {
        try Self.utf8String(UnsafeRawBufferPointer(rebasing: buffer[try lengthDelimited()]))
    }

    /// The rest of this reader's range read as a UTF-8 string (an entry of a repeated string
    /// field, read through a reader of its own).
    @inline(__always)
    package mutating func wholeString() throws(WireDecodingError) -> String {
        defer { position = end }
        return try Self.utf8String(UnsafeRawBufferPointer(rebasing: buffer[position..<end]))
    }

    /// `bytes` as a String, checked to be UTF-8. ASCII, the common case, is valid UTF-8 as it
    /// is: checked eight bytes at a time and made a String without the general validator
    /// (which looks up generic metadata on every call, a fifth of a view's time on a run of
    /// small structs).
    @inline(__always)
    private static func utf8String(_ raw: UnsafeRawBufferPointer) throws(WireDecodingError) -> String {
        let bytes = raw.bindMemory(to: UInt8.self)
        if isASCII(bytes) { return String(decoding: bytes, as: UTF8.self) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .malformed("a string that is not UTF-8")
        }
        return text
    }

    /// Whether every byte is below 0x80.
    @inline(__always)
    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var index = 0
        var high: UInt64 = 0
        while index + 8 <= bytes.count {
            high |= raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < bytes.count {
            high |= UInt64(bytes[index])
            index += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// A bytes field's body, copied.
    package mutating func bytes() throws(WireDecodingError) -> [UInt8] {
        Array(UnsafeRawBufferPointer(rebasing: buffer[try lengthDelimited()]))
    }

    /// Skips a field's value of `type`.
    package mutating func skip(_ type: WireType) throws(WireDecodingError) {
        switch type {
        case .varint: _ = try varint()
        case .fixed64: _ = try fixed64()
        case .lengthDelimited: _ = try lengthDelimited()
        case .fixed32: _ = try fixed32()
        case .startGroup, .endGroup: throw .malformed("a group (protobuf 2), which this protocol never uses")
        }
    }

    /// How many fields numbered `number` the rest of the message holds (a walk over it that
    /// leaves this reader where it is). Stops at the first thing it cannot read: the reading
    /// proper reports that.
    package func countFields(_ number: UInt32) -> Int {
        var walker = self
        var count = 0
        while let (field, type) = try? walker.nextField() {
            if field == number { count += 1 }
            guard (try? walker.skip(type)) != nil else { break }
        }
        return count
    }

    /// Checks that a field has the wire type its declaration gives it.
    @inline(__always)
    package func expect(_ actual: WireType, _ expected: WireType, field: UInt32) throws(WireDecodingError) {
        guard actual == expected else { throw .malformed("field \(field) has wire type \(actual.rawValue), expected \(expected.rawValue)") }
    }
}

/// Why hand-decoding a message failed.
package enum WireDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes end inside a field.
    case truncated
    /// Something protobuf (or this protocol) does not allow; the text says what.
    case malformed(String)
    /// A field or value this decoder does not take (an unknown field where none may be, a
    /// form only the generated code reads): the caller decodes the message the general way.
    case unsupported(String)

    /// What went wrong.
    package var description: String {
        switch self {
        case .truncated: "the message ends inside a field"
        case .malformed(let what): "malformed: \(what)"
        case .unsupported(let what): "not read by the fast path: \(what)"
        }
    }
}
