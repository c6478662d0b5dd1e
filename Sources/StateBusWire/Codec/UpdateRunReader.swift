import Foundation
import SwiftProtobuf

/// Reads a version-2 `Publication` carrying an `UpdateRun`, in place: the header at once,
/// then the batches and their changes in order (``nextBatch()``, ``nextChange()``), each
/// value decoded straight from its column.
///
/// ```swift
/// var run = try UpdateRunReader(publication: bytes)
/// while let batch = try run.nextBatch() {
///     for _ in 0..<batch.changes { apply(try run.nextChange(), at: batch.sequence) }
/// }
/// ```
package struct UpdateRunReader {
    /// One batch's header.
    package struct Batch: Sendable, Equatable {
        package var sequence: UInt64
        /// How many changes follow (read them with ``UpdateRunReader/nextChange()``).
        package var changes: Int
        /// The writing view's id, or `nil` for the host's own change.
        package var origin: String?
        package var writeID: UInt64
    }

    /// The publication's `protocol_version`.
    package private(set) var protocolVersion: UInt32 = 0
    /// The object's index in the welcome.
    package private(set) var object = 0
    package private(set) var epoch: UInt64 = 0
    package private(set) var firstSequence: UInt64 = 0
    /// How many batches the run holds.
    package private(set) var batches = 0

    private var columns: ColumnCursor
    private var batchChanges: WireReader?
    private var originBatches: WireReader
    private var origins: RepeatedField
    private var writeIDs: WireReader
    private var nextOrigin: Int?
    private var batchIndex = 0
    private var changesLeft = 0
    /// Whether the run has a column of values that cost a decoding (strings, bytes, lists,
    /// maps): only then can skipping superseded ones pay.
    private var hasCostlyValues = false
    /// The changes ``nextLiveChange()`` leaves out, by their place in the run (empty: none).
    private var superseded: [Bool] = []
    /// The place in the run of the next change read.
    private var changeIndex = 0

    /// Reads the header of the publication in `buffer` (valid while the reader is used).
    /// - Throws: `.malformed` for invalid bytes or a publication without a run;
    ///   `.unsupported` for a valid form other than the canonical one a host writes (see
    ///   ``canonical(_:)``).
    package init(publication buffer: UnsafeRawBufferPointer) throws(WireDecodingError) {
        var outer = WireReader(buffer)
        var version: UInt32 = 0
        var runRange: Range<Int>?
        while let (field, type) = try outer.nextField() {
            switch field {
            case 1:
                try outer.expect(type, .varint, field: field)
                version = try outer.varint32()
            case 13:
                try outer.expect(type, .lengthDelimited, field: field)
                guard runRange == nil else { throw .unsupported("a run in several pieces") }
                runRange = try outer.lengthDelimited()
            default:
                try outer.skip(type)
            }
        }
        guard let runRange else { throw .malformed("a publication without a run") }
        var reader = WireReader(buffer, range: runRange)
        var layout = ColumnLayout(hasPathed: true)
        var object: UInt32 = 0
        var epoch: UInt64 = 0
        var first: UInt64 = 0
        var batches: UInt32 = 0
        var batchChanges: Range<Int>?
        var originBatches: Range<Int> = 0..<0
        var writeIDs: Range<Int> = 0..<0
        var originsStart: Int?
        while true {
            let at = reader.position
            guard let (field, type) = try reader.nextField() else { break }
            if try layout.note(field, type, at: at, reader: &reader) { continue }
            switch field {
            case 1:
                try reader.expect(type, .varint, field: field)
                object = try reader.varint32()
            case 2:
                try reader.expect(type, .varint, field: field)
                epoch = try reader.varint()
            case 3:
                try reader.expect(type, .varint, field: field)
                first = try reader.varint()
            case 4:
                try reader.expect(type, .varint, field: field)
                batches = try reader.varint32()
            case 5, 13, 15:
                guard type == .lengthDelimited else { throw .unsupported("an unpacked column (field \(field))") }
                let range = try reader.lengthDelimited()
                switch field {
                case 5:
                    guard batchChanges == nil else { throw .unsupported("a column in several pieces (field 5)") }
                    batchChanges = range
                case 13:
                    guard originBatches.isEmpty else { throw .unsupported("a column in several pieces (field 13)") }
                    originBatches = range
                default:
                    guard writeIDs.isEmpty else { throw .unsupported("a column in several pieces (field 15)") }
                    writeIDs = range
                }
            case 14:
                try reader.expect(type, .lengthDelimited, field: field)
                _ = try reader.lengthDelimited()
                if originsStart == nil { originsStart = at }
            default:
                try reader.skip(type)
            }
        }
        guard batches > 0 else { throw .malformed("a run without batches") }
        protocolVersion = version
        self.object = Int(object)
        self.epoch = epoch
        firstSequence = first
        self.batches = Int(batches)
        columns = ColumnCursor(buffer, message: runRange, layout: layout)
        hasCostlyValues = layout.strings != nil || layout.blobs != nil || layout.values != nil
        self.batchChanges = batchChanges.map { WireReader(buffer, range: $0) }
        self.originBatches = WireReader(buffer, range: originBatches)
        origins = RepeatedField(number: 14, reader: WireReader(buffer, range: (originsStart ?? runRange.upperBound)..<runRange.upperBound))
        self.writeIDs = WireReader(buffer, range: writeIDs)
        nextOrigin = self.originBatches.isAtEnd ? nil : Int(try self.originBatches.varint32())
    }

    /// The next batch's header, or `nil` after the last. Read its changes (all of them)
    /// with ``nextChange()`` before asking for the next batch.
    package mutating func nextBatch() throws(WireDecodingError) -> Batch? {
        guard changesLeft == 0 else { throw .malformed("a batch's changes were not all read") }
        guard batchIndex < batches else { return nil }
        let index = batchIndex
        batchIndex += 1
        let changes: Int
        if var counts = batchChanges {
            guard !counts.isAtEnd else { throw .malformed("fewer batch sizes than batches") }
            changes = Int(try counts.varint32())
            batchChanges = counts
        } else {
            changes = 1
        }
        var batch = Batch(sequence: firstSequence &+ UInt64(index), changes: changes, origin: nil, writeID: 0)
        if nextOrigin == index {
            var body = try origins.next()
            batch.origin = try body.wholeString()
            batch.writeID = try writeIDs.varint()
            nextOrigin = originBatches.isAtEnd ? nil : Int(try originBatches.varint32())
        }
        changesLeft = changes
        return batch
    }

    /// The next change of the current batch.
    @inline(__always)
    package mutating func nextChange() throws(WireDecodingError) -> IndexedChange {
        guard changesLeft > 0 else { throw .malformed("more changes read than the batch has") }
        changesLeft -= 1
        changeIndex += 1
        return try columns.next()
    }

    /// Has ``nextLiveChange()`` leave out the changes whose whole value a later change of
    /// the run replaces whole (``ColumnCursor/supersededCells()``), for a copy that keeps
    /// only each property's latest value: their values are never decoded. Call it before
    /// the first batch. A run of one batch, or without strings, bytes, lists or maps, has
    /// nothing worth leaving out and is not looked at.
    package mutating func leaveOutSupersededChanges() throws(WireDecodingError) {
        guard batches > 1, hasCostlyValues, changeIndex == 0 else { return }
        superseded = try columns.supersededCells()
    }

    /// The next change of the current batch, or `nil` for one left out
    /// (``leaveOutSupersededChanges()``), which is read past without decoding its value.
    @inline(__always)
    package mutating func nextLiveChange() throws(WireDecodingError) -> IndexedChange? {
        guard changeIndex < superseded.count, superseded[changeIndex] else { return try nextChange() }
        guard changesLeft > 0 else { throw .malformed("more changes read than the batch has") }
        changesLeft -= 1
        changeIndex += 1
        try columns.skip()
        return nil
    }

    /// The canonical bytes of a publication whose run the fast path does not take (a valid
    /// form other than a host's): decoded by the generated code and written again.
    /// - Throws: when the bytes are not a valid `Publication` at all, or its run has fewer
    ///   batch sizes (or, without sizes, fewer cells) than batches.
    package static func canonical(_ buffer: UnsafeRawBufferPointer) throws -> [UInt8] {
        let publication = try Statebus_V1_Publication(serializedBytes: Array(buffer), options: WireDecoding.options)
        let run = publication.run
        // The batch count is the sender's word: refused, as the fast path refuses it, unless
        // the message holds a batch size (or, without sizes, a cell) for every batch. Each
        // takes at least a byte, so the loop below is bounded by the message's size, where a
        // 19-byte run claiming 4 billion batches would otherwise allocate tens of gigabytes.
        guard run.batches > 0 else { throw WireDecodingError.malformed("a run without batches") }
        if run.batchChanges.isEmpty {
            guard run.cells.count >= run.batches else { throw WireDecodingError.malformed("fewer cells than changes") }
        } else {
            guard run.batchChanges.count >= run.batches else { throw WireDecodingError.malformed("fewer batch sizes than batches") }
        }
        var encoder = UpdateRunEncoder()
        encoder.start(object: Int(run.object), epoch: run.epoch, firstSequence: run.firstSequence)
        var columns = GeneratedColumns(run: run)
        var origin = 0
        for batch in 0..<Int(run.batches) {
            if origin < run.originBatches.count, run.originBatches[origin] == batch {
                encoder.beginBatch(
                    origin: origin < run.origins.count ? run.origins[origin] : "", writeID: origin < run.writeIds.count ? run.writeIds[origin] : 0)
                origin += 1
            } else {
                encoder.beginBatch(origin: nil, writeID: 0)
            }
            let count = run.batchChanges.isEmpty ? 1 : (batch < run.batchChanges.count ? Int(run.batchChanges[batch]) : 0)
            for _ in 0..<count { encoder.append(try columns.next()) }
        }
        return encoder.publication()
    }
}

/// The columns of a message decoded by the generated code, read as ``ColumnCursor`` reads them.
struct GeneratedColumns {
    var cells: ArraySlice<UInt32>
    var ints: ArraySlice<Int64>
    var doubles: ArraySlice<Double>
    var strings: ArraySlice<String>
    var blobs: ArraySlice<Data>
    var values: ArraySlice<Statebus_V1_Value>
    var pathed: ArraySlice<Statebus_V1_PathedChange>

    init(run: Statebus_V1_UpdateRun) {
        (cells, ints, doubles, strings) = (run.cells[...], run.ints[...], run.doubles[...], run.strings[...])
        (blobs, values, pathed) = (run.blobs[...], run.values[...], run.pathed[...])
    }

    init(part: Statebus_V1_SnapshotPart) {
        (cells, ints, doubles, strings) = (part.cells[...], part.ints[...], part.doubles[...], part.strings[...])
        (blobs, values, pathed) = (part.blobs[...], part.values[...], [])
    }

    mutating func next() throws(WireDecodingError) -> IndexedChange {
        guard let cell = cells.popFirst() else { throw .malformed("fewer cells than changes") }
        let property = Int(cell >> 3)
        func missing(_ column: String) -> WireDecodingError { .malformed("the \(column) column ends early") }
        switch CellEncoding(rawValue: cell & 7)! {
        case .int:
            guard let number = ints.popFirst() else { throw missing("ints") }
            return IndexedChange(property: property, value: .int(number))
        case .bool:
            guard let number = ints.popFirst() else { throw missing("ints") }
            return IndexedChange(property: property, value: .bool(number != 0))
        case .double:
            guard let number = doubles.popFirst() else { throw missing("doubles") }
            return IndexedChange(property: property, value: .double(number))
        case .string:
            guard let text = strings.popFirst() else { throw missing("strings") }
            return IndexedChange(property: property, value: .string(text))
        case .bytes:
            guard let data = blobs.popFirst() else { throw missing("blobs") }
            return IndexedChange(property: property, value: .bytes(data))
        case .null:
            return IndexedChange(property: property, value: .null)
        case .value:
            guard let value = values.popFirst() else { throw missing("values") }
            return IndexedChange(property: property, value: Value(wire: value))
        case .pathed:
            guard let change = pathed.popFirst() else { throw missing("pathed") }
            // An enum value no version defines may be negative (protobuf's enums are int32).
            guard let number = UInt64(exactly: change.operation.rawValue), let operation = PathCodec.operation(number) else {
                throw .malformed("an element operation this view does not know")
            }
            return IndexedChange(
                property: property, path: ValuePath(wire: change.path), value: Value(wire: change.value), operation: operation,
                position: Int(change.position))
        }
    }
}

/// The options every general (generated-code) decode of untrusted bytes uses.
package enum WireDecoding {
    /// Shallow nesting, so a hostile message cannot recurse deeply.
    package static let options: BinaryDecodingOptions = {
        var options = BinaryDecodingOptions()
        options.messageDepthLimit = ValueCodec.decodingDepthLimit
        return options
    }()
}

/// A run read whole: every batch with its changes (for a relay, which keeps a copy of the
/// object and may tell version-1 views about the same batches).
package struct DecodedRun: Sendable {
    package var object: Int
    package var epoch: UInt64
    package var batches: [(batch: UpdateRunReader.Batch, changes: [IndexedChange])]

    /// Reads the run of the publication in `buffer` (a form other than a host's is read the
    /// general way).
    /// - Throws: `WireDecodingError` or a protobuf error when the bytes are not a valid run.
    package init(publication buffer: UnsafeRawBufferPointer) throws {
        var run: UpdateRunReader
        do {
            run = try UpdateRunReader(publication: buffer)
        } catch .unsupported(_) {
            self = try UpdateRunReader.canonical(buffer).withUnsafeBytes { try DecodedRun(publication: $0) }
            return
        }
        object = run.object
        epoch = run.epoch
        batches = []
        while let batch = try run.nextBatch() {
            batches.append((batch, try (0..<batch.changes).map { _ in try run.nextChange() }))
        }
    }
}
