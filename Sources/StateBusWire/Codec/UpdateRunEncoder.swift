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
    }

    /// Appends a whole value to the current batch.
    @inline(__always)
    package mutating func append(property: Int, value: Value) {
        columns.append(property: property, value: value)
        batchChanges[batchChanges.count - 1] += 1
    }

    /// Appends a change to the current batch.
    package mutating func append(_ change: IndexedChange) {
        columns.append(change)
        batchChanges[batchChanges.count - 1] += 1
    }

    /// About how many bytes the publication takes (exact but for the header's few bytes).
    package var encodedSize: Int {
        24 + columns.encodedSize + batchChanges.count * 2 + originBatches.count + origins.count + writeIDs.count + 12
    }

    /// The whole `Publication` (`protocol_version` 2, `run`).
    package func publication() -> [UInt8] {
        var header = WireWriter(capacity: 40)
        header.field(1, varint: UInt64(object))
        header.field(2, varint: epoch)
        header.field(3, varint: firstSequence)
        header.field(4, varint: UInt64(batchChanges.count))
        if batchChanges.contains(where: { $0 != 1 }) {
            var counts = WireWriter(capacity: batchChanges.count)
            for count in batchChanges { counts.varint(UInt64(count)) }
            header.field(5, packed: counts)
        }
        func packedSize(_ writer: WireWriter) -> Int { writer.isEmpty ? 0 : 1 + WireWriter.varintSize(UInt64(writer.count)) + writer.count }
        let bodySize = header.count + columns.encodedSize + packedSize(originBatches) + origins.count + packedSize(writeIDs)
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
