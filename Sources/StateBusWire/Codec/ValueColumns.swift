/// The value columns of a version-2 run or snapshot part, being written: one cell per change
/// (`property index << 3 | encoding`) and the value in its encoding's column. Field numbers
/// are the same in `UpdateRun` and `SnapshotPart` (6 to 12).
///
/// The writers keep their storage between messages, so a host that encodes a run per turn
/// of its loop does not allocate per change.
package struct ValueColumns: Sendable {
    private var cells = WireWriter()
    private var ints = WireWriter()
    private var doubles = WireWriter()
    private var strings = WireWriter()
    private var blobs = WireWriter()
    private var values = WireWriter()
    private var pathed = WireWriter()
    /// How many cells are written.
    package private(set) var count = 0

    package init() {}

    /// Empties every column, keeping storage.
    package mutating func removeAll() {
        cells.removeAll()
        ints.removeAll()
        doubles.removeAll()
        strings.removeAll()
        blobs.removeAll()
        values.removeAll()
        pathed.removeAll()
        count = 0
    }

    /// The bytes the columns add to their message.
    package var encodedSize: Int {
        func packed(_ writer: WireWriter) -> Int { writer.isEmpty ? 0 : 1 + WireWriter.varintSize(UInt64(writer.count)) + writer.count }
        return packed(cells) + packed(ints) + packed(doubles) + strings.count + blobs.count + values.count + pathed.count
    }

    @inline(__always)
    private mutating func cell(_ property: Int, _ encoding: CellEncoding) {
        cells.varint(UInt64(UInt32(truncatingIfNeeded: property) << 3 | encoding.rawValue))
        count += 1
    }

    /// Appends a whole value of `property`.
    @inline(__always)
    package mutating func append(property: Int, value: Value) {
        switch value {
        case .int(let number):
            cell(property, .int)
            ints.zigzag(number)
        case .bool(let flag):
            cell(property, .bool)
            ints.varint(flag ? 2 : 0)  // zigzag(1) is 2
        case .double(let number):
            cell(property, .double)
            doubles.fixed64(number.bitPattern)
        case .string(let text):
            cell(property, .string)
            strings.tag(9, .lengthDelimited)
            strings.appendLengthPrefixed(string: text)
        case .bytes(let data):
            cell(property, .bytes)
            blobs.tag(10, .lengthDelimited)
            blobs.varint(UInt64(data.count))
            blobs.append(contentsOf: data)
        case .null:
            cell(property, .null)
        case .list, .map:
            cell(property, .value)
            values.field(11, message: { ValueCodec.write(value, into: &$0) })
        }
    }

    /// Appends a change: whole values go to their column, others to `pathed`.
    package mutating func append(_ change: IndexedChange) {
        guard !change.replacesWholeValue else {
            append(property: change.property, value: change.value)
            return
        }
        cell(change.property, .pathed)
        pathed.field(12, message: { PathCodec.writePathed(change, into: &$0) })
    }

    /// Writes the columns as fields 6 to 12 of their message.
    package func write(into writer: inout WireWriter) {
        writer.field(6, packed: cells)
        writer.field(7, packed: ints)
        writer.field(8, packed: doubles)
        writer.append(strings)
        writer.append(blobs)
        writer.append(values)
        writer.append(pathed)
    }
}

extension WireWriter {
    /// How many bytes `value` takes as a varint.
    @inline(__always)
    package static func varintSize(_ value: UInt64) -> Int {
        (64 - (value | 1).leadingZeroBitCount + 6) / 7
    }
}
