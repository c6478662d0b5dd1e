import Foundation

/// Writes a version-2 `Reply` carrying a `SnapshotPart`: a slice of an object's properties
/// in index order, values column by column, with their versions.
package struct SnapshotPartEncoder: Sendable {
    private var columns = ValueColumns()
    private var versions = WireWriter()
    private var anyVersion = false

    package init() {}

    /// How many properties the part holds so far.
    package var count: Int { columns.count }

    /// About how many bytes the part takes so far.
    package var encodedSize: Int { columns.encodedSize + versions.count }

    /// An upper bound of the whole reply's bytes (``reply(requestID:object:epoch:sequence:part:last:)``)
    /// once one more property is appended, whose value's `encodedSizeBound` is
    /// `valueSizeBound`: for filling a part up to a bound in bytes.
    package func replySizeBound(appending valueSizeBound: Int, requestID: UInt64) -> Int {
        // The reply's protocol_version (2 bytes) and request_id, the part's tag (2) and length
        // (5); its header: object (6), epoch (11), sequence (11), part (6), last (2); the
        // versions' tag and length (6).
        let framing = 2 + 1 + WireWriter.varintSize(requestID) + 2 + 5 + 6 + 11 + 11 + 6 + 2 + 6
        // The next property: its cell (5), its version (10), the growth of the cells' and its
        // column's packed prefixes (4), and its column's entry, within the value's bound.
        return framing + columns.encodedSize + versions.count + 5 + 10 + 4 + valueSizeBound
    }

    /// Empties the encoder for the next part.
    package mutating func removeAll() {
        columns.removeAll()
        versions.removeAll()
        anyVersion = false
    }

    /// Appends the next property's value and version.
    @inline(__always)
    package mutating func append(property: Int, value: Value, version: UInt64) {
        columns.append(property: property, value: value)
        versions.varint(version)
        if version != 0 { anyVersion = true }
    }

    /// The whole `Reply` (`protocol_version` 2, `request_id`, `snapshot_part`).
    package func reply(
        requestID: UInt64, object: Int, epoch: UInt64, sequence: UInt64, part: Int, last: Bool
    ) -> [UInt8] {
        var header = WireWriter(capacity: 40)
        header.field(1, varint: UInt64(object))
        header.field(2, varint: epoch)
        header.field(3, varint: sequence)
        header.field(4, varint: UInt64(part))
        header.field(5, bool: last)
        let versionsSize = anyVersion ? 1 + WireWriter.varintSize(UInt64(versions.count)) + versions.count : 0
        let bodySize = header.count + columns.encodedSize + versionsSize
        var out = WireWriter(capacity: bodySize + 24)
        out.field(1, varint: 2)
        out.field(2, varint: requestID)
        out.tag(17, .lengthDelimited)
        out.varint(UInt64(bodySize))
        out.append(header)
        columns.write(into: &out)
        if anyVersion { out.field(12, packed: versions) }
        return out.bytes
    }
}

/// Reads a version-2 `SnapshotPart` (the body of a reply's `snapshot_part`) in place: the
/// header at once, then each property's change and version in order.
package struct SnapshotPartReader {
    package private(set) var object = 0
    package private(set) var epoch: UInt64 = 0
    package private(set) var sequence: UInt64 = 0
    package private(set) var part = 0
    package private(set) var last = false
    private var columns: ColumnCursor
    private var versions: WireReader

    /// Reads the header of the part in `buffer[range]`.
    /// - Throws: `.malformed` for invalid bytes, `.unsupported` for a non-canonical form.
    package init(_ buffer: UnsafeRawBufferPointer, range: Range<Int>) throws(WireDecodingError) {
        var reader = WireReader(buffer, range: range)
        var layout = ColumnLayout(hasPathed: false)
        var versions: Range<Int> = 0..<0
        var sawVersions = false
        while true {
            let at = reader.position
            guard let (field, type) = try reader.nextField() else { break }
            if try layout.note(field, type, at: at, reader: &reader) { continue }
            switch field {
            case 1:
                try reader.expect(type, .varint, field: field)
                object = Int(try reader.varint32())
            case 2:
                try reader.expect(type, .varint, field: field)
                epoch = try reader.varint()
            case 3:
                try reader.expect(type, .varint, field: field)
                sequence = try reader.varint()
            case 4:
                try reader.expect(type, .varint, field: field)
                part = Int(try reader.varint32())
            case 5:
                try reader.expect(type, .varint, field: field)
                last = try reader.varint() != 0
            case 12:
                guard type == .lengthDelimited, !sawVersions else { throw .unsupported("versions not in one packed column") }
                sawVersions = true
                versions = try reader.lengthDelimited()
            default:
                try reader.skip(type)
            }
        }
        columns = ColumnCursor(buffer, message: range, layout: layout)
        self.versions = WireReader(buffer, range: versions)
    }

    /// Whether every property has been read.
    package var isAtEnd: Bool { columns.isAtEnd }

    /// The next property's value and version (0 when the part lists no versions).
    /// - Throws: `.malformed` for a change inside a value (snapshots hold whole values).
    @inline(__always)
    package mutating func next() throws(WireDecodingError) -> (change: IndexedChange, version: UInt64) {
        let change = try columns.next()
        guard change.replacesWholeValue else { throw .malformed("a snapshot part with a change inside a value") }
        let version = versions.isAtEnd ? 0 : try versions.varint()
        return (change, version)
    }

    /// The canonical bytes of a part the fast path does not take, written again from the
    /// generated code's decoding; `nil` when the bytes are not a valid `SnapshotPart`.
    package static func canonicalReply(_ part: Statebus_V1_SnapshotPart, requestID: UInt64) throws -> [UInt8] {
        var encoder = SnapshotPartEncoder()
        var columns = GeneratedColumns(part: part)
        var index = 0
        while !columns.cells.isEmpty {
            let change = try columns.next()
            encoder.append(property: change.property, value: change.value, version: index < part.versions.count ? part.versions[index] : 0)
            index += 1
        }
        return encoder.reply(
            requestID: requestID, object: Int(part.object), epoch: part.epoch, sequence: part.sequence, part: Int(part.part), last: part.last)
    }
}
