import Foundation

/// Where a version-2 message's value columns are (fields 6 to 12 of `UpdateRun` and
/// `SnapshotPart`), found by one pass over its fields (``note(_:_:at:reader:)``).
///
/// The fast path takes the canonical form a host writes: each packed column once, packed.
/// Any other valid form (a column split in pieces, or unpacked) is `.unsupported`, and the
/// caller decodes the message the general way and writes it again canonically.
package struct ColumnLayout: Sendable {
    var cells: Range<Int> = 0..<0
    var ints: Range<Int> = 0..<0
    var doubles: Range<Int> = 0..<0
    /// Where the first of each repeated length-delimited column starts (its field key).
    var strings: Int?
    var blobs: Int?
    var values: Int?
    var pathed: Int?
    private var seenPacked: UInt8 = 0
    /// Whether field 12 is the `pathed` column (runs) rather than another field (snapshot parts).
    private let hasPathed: Bool

    /// A layout for a run (`hasPathed`) or a snapshot part.
    package init(hasPathed: Bool) { self.hasPathed = hasPathed }

    /// Takes field `number` (read at key position `at`) when it is a column; returns
    /// `false` for other fields, which the caller reads.
    package mutating func note(_ number: UInt32, _ type: WireType, at: Int, reader: inout WireReader) throws(WireDecodingError) -> Bool {
        switch number {
        case 6, 7, 8:
            guard type == .lengthDelimited else { throw .unsupported("an unpacked column (field \(number))") }
            let bit = UInt8(1) << (number - 6)
            guard seenPacked & bit == 0 else { throw .unsupported("a column in several pieces (field \(number))") }
            seenPacked |= bit
            let range = try reader.lengthDelimited()
            switch number {
            case 6: cells = range
            case 7: ints = range
            default: doubles = range
            }
        case 9, 10, 11, 12:
            if number == 12 && !hasPathed { return false }
            try reader.expect(type, .lengthDelimited, field: number)
            _ = try reader.lengthDelimited()
            switch number {
            case 9: if strings == nil { strings = at }
            case 10: if blobs == nil { blobs = at }
            case 11: if values == nil { values = at }
            default: if pathed == nil { pathed = at }
            }
        default:
            return false
        }
        return true
    }
}

/// Reads a version-2 message's changes in order: each cell with its value from its column.
package struct ColumnCursor {
    private var cells: WireReader
    private var ints: WireReader
    private var doubles: WireReader
    private var strings: RepeatedField
    private var blobs: RepeatedField
    private var values: RepeatedField
    private var pathed: RepeatedField

    /// A cursor over the columns of the message in `buffer[message]`, laid out as `layout` says.
    package init(_ buffer: UnsafeRawBufferPointer, message: Range<Int>, layout: ColumnLayout) {
        cells = WireReader(buffer, range: layout.cells)
        ints = WireReader(buffer, range: layout.ints)
        doubles = WireReader(buffer, range: layout.doubles)
        func field(_ number: UInt32, _ start: Int?) -> RepeatedField {
            RepeatedField(number: number, reader: WireReader(buffer, range: (start ?? message.upperBound)..<message.upperBound))
        }
        strings = field(9, layout.strings)
        blobs = field(10, layout.blobs)
        values = field(11, layout.values)
        pathed = field(12, layout.pathed)
    }

    /// Whether every cell has been read.
    package var isAtEnd: Bool { cells.isAtEnd }

    /// Which of the cells not yet read hold a whole value that a later cell of the message
    /// replaces whole, with nothing in between that changes the same property: a copy that
    /// keeps only each property's latest value need not decode them (``skip()``).
    ///
    /// Only values that cost a decoding (strings, bytes, lists and maps) are marked; a cell
    /// after a change inside the value (a pathed cell) is never marked superseded by it.
    /// Reads the cells column only, from a copy of the cursor's place.
    /// - Returns: one flag per cell, in order; empty when none is superseded.
    /// - Throws: `.malformed` for a cell that is not a valid varint.
    package func supersededCells() throws(WireDecodingError) -> [Bool] {
        var reader = cells
        var marks: [Bool] = []
        var anyMarked = false
        // For each property, its last cell so far, when that cell is a costly whole value.
        var lastCostly: [Int: Int] = [:]
        var index = 0
        while !reader.isAtEnd {
            let cell = try reader.varint32()
            let property = Int(cell >> 3)
            let encoding = CellEncoding(rawValue: cell & 7)!
            if encoding != .pathed, let earlier = lastCostly[property] {
                marks[earlier] = true
                anyMarked = true
            }
            switch encoding {
            case .string, .bytes, .value: lastCostly[property] = index
            default: lastCostly[property] = nil
            }
            marks.append(false)
            index += 1
        }
        return anyMarked ? marks : []
    }

    /// Moves past the next cell and its value without decoding the value (see
    /// ``supersededCells()``); only the value's place in its column is read.
    /// - Throws: `.malformed` when the cell or its column's entry is missing.
    package mutating func skip() throws(WireDecodingError) {
        guard !cells.isAtEnd else { throw .malformed("fewer cells than changes") }
        let cell = try cells.varint32()
        switch CellEncoding(rawValue: cell & 7)! {
        case .int, .bool:
            guard !ints.isAtEnd else { throw .malformed("the ints column ends early") }
            _ = try ints.varint()
        case .double: _ = try doubles.fixed64()
        case .string: _ = try strings.next()
        case .bytes: _ = try blobs.next()
        case .null: break
        case .value: _ = try values.next()
        case .pathed: _ = try pathed.next()
        }
    }

    /// The next change.
    /// - Throws: `.malformed` when a cell or its value is missing or not valid.
    @inline(__always)
    package mutating func next() throws(WireDecodingError) -> IndexedChange {
        guard !cells.isAtEnd else { throw .malformed("fewer cells than changes") }
        let cell = try cells.varint32()
        let property = Int(cell >> 3)
        switch CellEncoding(rawValue: cell & 7)! {
        case .int:
            guard !ints.isAtEnd else { throw .malformed("the ints column ends early") }
            return IndexedChange(property: property, value: .int(try ints.zigzag()))
        case .bool:
            guard !ints.isAtEnd else { throw .malformed("the ints column ends early") }
            return IndexedChange(property: property, value: .bool(try ints.zigzag() != 0))
        case .double:
            return IndexedChange(property: property, value: .double(Double(bitPattern: try doubles.fixed64())))
        case .string:
            var body = try strings.next()
            return IndexedChange(property: property, value: .string(try body.wholeString()))
        case .bytes:
            let body = try blobs.next()
            return IndexedChange(property: property, value: .bytes(Data(UnsafeRawBufferPointer(rebasing: body.buffer[body.position..<body.end]))))
        case .null:
            return IndexedChange(property: property, value: .null)
        case .value:
            var body = try values.next()
            return IndexedChange(property: property, value: try ValueCodec.read(&body, depth: 3))
        case .pathed:
            var body = try pathed.next()
            return try PathCodec.readPathed(&body, property: property)
        }
    }
}

/// The occurrences of one repeated length-delimited field of a message, in order, found by
/// reading on from the previous one (other fields in between are skipped).
struct RepeatedField {
    let number: UInt32
    var reader: WireReader

    /// A reader of the next occurrence's body.
    @inline(__always)
    mutating func next() throws(WireDecodingError) -> WireReader {
        while let (field, type) = try reader.nextField() {
            if field == number, type == .lengthDelimited { return try reader.nested() }
            try reader.skip(type)
        }
        throw .malformed("field \(number) has fewer entries than the cells need")
    }
}
