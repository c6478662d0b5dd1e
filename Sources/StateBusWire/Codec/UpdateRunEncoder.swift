/// Writes a version-2 `Publication` carrying one `UpdateRun`: consecutive batches of one
/// object, column by column (see `proto/statebus.proto`).
///
/// Reused from run to run (``start(object:epoch:firstSequence:)`` empties it and keeps its
/// storage), so a host publishing many small runs does not allocate per change.
///
/// ```swift
/// var run = UpdateRunEncoder()
/// run.start(object: 0, epoch: epoch, firstSequence: 42)
/// run.beginBatch(origin: nil, writeID: 0)
/// run.append(property: 3, value: .int(7))
/// let bytes = run.publication()
/// ```
package struct UpdateRunEncoder: Sendable {
    private var columns = ValueColumns()
    private var batchChanges: [UInt32] = []
    /// The bytes of `batch_changes`' entries (one varint per batch), kept as changes are
    /// appended so that ``encodedSize`` is exact without walking the batches.
    private var batchChangesBytes = 0
    /// How many batches have exactly one change: when all do, `batch_changes` is left out.
    private var singleChangeBatches = 0
    private var originBatches = WireWriter()
    private var origins = WireWriter()
    private var writeIDs = WireWriter()
    private var object: UInt32 = 0
    private var epoch: UInt64 = 0
    private var firstSequence: UInt64 = 0

    package init() {}

    /// How many batches the run holds.
    package var batches: Int { batchChanges.count }

    /// Empties the encoder for a run of `object` starting at `firstSequence`.
    package mutating func start(object: Int, epoch: UInt64, firstSequence: UInt64) {
        columns.removeAll()
        batchChanges.removeAll(keepingCapacity: true)
        batchChangesBytes = 0
        singleChangeBatches = 0
        originBatches.removeAll()
        origins.removeAll()
        writeIDs.removeAll()
        self.object = UInt32(truncatingIfNeeded: object)
        self.epoch = epoch
        self.firstSequence = firstSequence
    }

    /// Starts the next batch (sequence `firstSequence + batches`).
    /// - Parameters:
    ///   - origin: the writing view's id, or `nil` for the host's own change.
    ///   - writeID: the view's write id (ignored without an origin).
    package mutating func beginBatch(origin: String?, writeID: UInt64) {
        if let origin {
            originBatches.varint(UInt64(batchChanges.count))
            origins.tag(14, .lengthDelimited)
            origins.appendLengthPrefixed(string: origin)
            writeIDs.varint(writeID)
        }
        batchChanges.append(0)
        batchChangesBytes += 1
    }

    /// Appends a whole value to the current batch.
    @inline(__always)
    package mutating func append(property: Int, value: Value) {
        columns.append(property: property, value: value)
        countChange()
    }

    /// Appends a change to the current batch.
    package mutating func append(_ change: IndexedChange) {
        columns.append(change)
        countChange()
    }

    /// Counts one more change in the current batch, and what its count costs on the wire.
    @inline(__always)
    private mutating func countChange() {
        let last = batchChanges.count - 1
        batchChanges[last] += 1
        let count = batchChanges[last]
        if count == 1 {
            singleChangeBatches += 1
        } else if count == 2 {
            singleChangeBatches -= 1
        }
        // A varint grows by a byte only at a multiple of 128.
        if count & 0x7F == 0 { batchChangesBytes += WireWriter.varintSize(UInt64(count)) - WireWriter.varintSize(UInt64(count - 1)) }
    }

    /// The bytes ``publication()`` returns: the whole `Publication`, exactly, so that a run
    /// is kept within a bound in bytes.
    package var encodedSize: Int {
        let body = bodySize
        // protocol_version 2 (tag and value), then the run's tag and length.
        return 2 + 1 + WireWriter.varintSize(UInt64(body)) + body
    }

    /// The run's header fields (1 to 5), as ``publication()`` writes them.
    private var headerSize: Int {
        func varintField(_ value: UInt64) -> Int { value == 0 ? 0 : 1 + WireWriter.varintSize(value) }
        var size = varintField(UInt64(object)) + varintField(epoch) + varintField(firstSequence) + varintField(UInt64(batchChanges.count))
        if singleChangeBatches != batchChanges.count { size += 1 + WireWriter.varintSize(UInt64(batchChangesBytes)) + batchChangesBytes }
        return size
    }

    /// The `UpdateRun`'s bytes.
    private var bodySize: Int {
        func packedSize(_ writer: WireWriter) -> Int { writer.isEmpty ? 0 : 1 + WireWriter.varintSize(UInt64(writer.count)) + writer.count }
        return headerSize + columns.encodedSize + packedSize(originBatches) + origins.count + packedSize(writeIDs)
    }

    /// The whole `Publication` (`protocol_version` 2, `run`).
    package func publication() -> [UInt8] {
        var header = WireWriter(capacity: 40)
        header.field(1, varint: UInt64(object))
        header.field(2, varint: epoch)
        header.field(3, varint: firstSequence)
        header.field(4, varint: UInt64(batchChanges.count))
        if singleChangeBatches != batchChanges.count {
            var counts = WireWriter(capacity: batchChangesBytes)
            for count in batchChanges { counts.varint(UInt64(count)) }
            header.field(5, packed: counts)
        }
        let bodySize = bodySize
        var out = WireWriter(capacity: bodySize + 16)
        out.field(1, varint: 2)
        out.tag(13, .lengthDelimited)
        out.varint(UInt64(bodySize))
        out.append(header)
        columns.write(into: &out)
        out.field(13, packed: originBatches)
        out.append(origins)
        out.field(15, packed: writeIDs)
        return out.bytes
    }
}
