import StateBusWire

/// A version-2 run built field by field, so that any field can be wrong: the header (object
/// index, epoch, first sequence, batch count, batch sizes), the origins (offsets out of order
/// or past the run, fewer ids than offsets), the value columns (``RawColumns``), the message
/// around it (two runs in one publication, a length that claims more than there is, a run
/// on the heartbeat's fields).
///
/// It starts as a valid run of generated batches at the truth's next sequence (most damage
/// then lands on a run the replica would otherwise apply) and takes one to three kinds of
/// damage.
struct HostileRun {
    var protocolVersion: UInt64 = 2
    var object: UInt64
    var epoch: UInt64
    var firstSequence: UInt64
    var batches: UInt64
    /// `nil`: left out (one change per batch).
    var batchChanges: [UInt64]?
    var originBatches: [UInt64] = []
    var origins: [[UInt8]] = []
    var writeIDs: [UInt64] = []
    var columns: RawColumns
    var form = RawColumns.Form.canonical
    /// Bytes appended to the publication after the run (another run, a bad field).
    var trailer: [UInt8] = []
    /// Bytes appended inside the run, after its fields.
    var runTrailer: [UInt8] = []
    /// The run's length prefix claims this many bytes more than it holds.
    var lengthLie: UInt64 = 0

    /// A valid run of a few generated batches at the truth's next sequence.
    init(truth: StandInTruth, viewID: String, using random: inout SeededRandom) {
        let generated = RunGenerator.batches(count: Int.random(in: 1...4, using: &random), viewID: viewID, using: &random)
        object = UInt64(truth.targetIndex)
        epoch = truth.epoch
        firstSequence = truth.sequence + 1
        batches = UInt64(generated.count)
        let counts = generated.map { UInt64($0.changes.count) }
        batchChanges = counts.allSatisfy { $0 == 1 } ? nil : counts
        for (offset, batch) in generated.enumerated() {
            guard let origin = batch.origin else { continue }
            originBatches.append(UInt64(offset))
            origins.append(Array(origin.utf8))
            writeIDs.append(batch.writeID)
        }
        columns = RawColumns(generated.flatMap(\.changes))
    }

    /// Applies one to three kinds of damage.
    mutating func damage(truth: StandInTruth, using random: inout SeededRandom) {
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            switch Int.random(in: 0..<10, using: &random) {
            case 0, 1: columns.damage(propertyCount: StandInTruth.names.count, using: &random)
            case 2: damageHeader(truth: truth, using: &random)
            case 3: damageBatchCount(using: &random)
            case 4: damageOrigins(using: &random)
            case 5: form = RawColumns.Form.allCases.randomElement(using: &random)!
            case 6: damageEnvelope(using: &random)
            case 7:  // a sequence that would wrap around, or a duplicate, or a gap
                firstSequence = [UInt64.max, UInt64.max - 1, truth.sequence, truth.sequence + 2, 0].randomElement(using: &random)!
            case 8:  // the protocol version of another or none
                protocolVersion = [0, 1, 3, UInt64(UInt32.max), 1 << 40].randomElement(using: &random)!
            default:  // an unknown field inside the run (protobuf skips it) or one of the wrong wire type
                runTrailer += random.oneIn(2) ? [0xF8, 0x07, 0x01] : [0x0A, 0x01, 0x00]  // field 1 (object) length-delimited
            }
        }
    }

    private mutating func damageHeader(truth: StandInTruth, using random: inout SeededRandom) {
        switch Int.random(in: 0..<3, using: &random) {
        case 0: object = [1 - UInt64(truth.targetIndex), 2, UInt64(UInt32.max), 1 << 35].randomElement(using: &random)!
        case 1: epoch = [0, truth.epoch &+ 1, UInt64.random(in: 0...UInt64.max, using: &random)].randomElement(using: &random)!
        default:
            object = UInt64(truth.targetIndex) | (1 << 32)  // past 32 bits: both decoders keep the low ones
        }
    }

    /// Batch counts that disagree with the batch sizes and the cells.
    private mutating func damageBatchCount(using random: inout SeededRandom) {
        // An earlier damage may have made the count huge: sizes are made for a few batches.
        let sized = Int(min(batches, 64))
        switch Int.random(in: 0..<6, using: &random) {
        case 0: batches = 0
        case 1: batches = [UInt64(UInt32.max), 1 << 20, 1 << 32, batches + 1].randomElement(using: &random)!
        case 2: batchChanges = (batchChanges ?? Array(repeating: 1, count: sized)).dropLast()
        case 3: batchChanges = (batchChanges ?? []) + [UInt64(UInt32.max)]
        case 4:
            // Batch sizes present but few, against a huge batch count: every batch past the
            // sizes has no changes, so only the count bounds the loop.
            batchChanges = [UInt64(columns.cells.count)]
            batches = UInt64(UInt32.max)
        default: batchChanges = batchChanges.map { $0.map { $0 &+ 1 } } ?? Array(repeating: 0, count: sized)
        }
    }

    private mutating func damageOrigins(using random: inout SeededRandom) {
        switch Int.random(in: 0..<5, using: &random) {
        case 0: originBatches = [batches, batches + 7, UInt64(UInt32.max)].shuffled(using: &random)
        case 1: originBatches = [1, 0]
        case 2:
            originBatches += [0]
            writeIDs = []
        case 3: origins = [[0xFF, 0xFE]] + origins
        default:
            originBatches = [0, 0]
            origins = [[0x61], [0x62]]
            writeIDs = [1, 2]
        }
    }

    private mutating func damageEnvelope(using random: inout SeededRandom) {
        switch Int.random(in: 0..<5, using: &random) {
        case 0:  // a second run: the general decoder merges the two
            var other = self
            other.trailer = []
            other.protocolVersion = 0
            trailer = other.publication()
        case 1: lengthLie = [1, 1 << 20, 1 << 40, UInt64.max >> 1].randomElement(using: &random)!
        case 2: trailer = [0x6A, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]  // a run field claiming 4 GiB
        case 3:  // a heartbeat and a join marker besides the run
            trailer = [0x5A, 0x02, 0x08, 0x01, 0x62, 0x00]
        default: trailer = [0x6B]  // a group start, which protobuf 3 never writes
        }
    }

    /// The whole `Publication`.
    func publication() -> [UInt8] {
        var run = WireWriter()
        run.field(1, varint: object)
        run.field(2, varint: epoch)
        run.field(3, varint: firstSequence)
        run.field(4, varint: batches)
        func packed(_ number: UInt32, _ entries: [UInt64]) {
            var column = WireWriter()
            for entry in entries { column.varint(entry) }
            if form == .unpacked {
                for entry in entries {
                    run.tag(number, .varint)
                    run.varint(entry)
                }
            } else {
                run.field(number, packed: column)
            }
        }
        if let batchChanges { packed(5, batchChanges) }
        columns.write(into: &run, form: form, withPathed: true)
        packed(13, originBatches)
        for origin in origins {
            run.tag(14, .lengthDelimited)
            run.varint(UInt64(origin.count))
            run.append(contentsOf: origin)
        }
        packed(15, writeIDs)
        run.append(contentsOf: runTrailer)
        var out = WireWriter(capacity: run.count + 16)
        out.field(1, varint: protocolVersion)
        out.tag(13, .lengthDelimited)
        out.varint(UInt64(run.count) &+ lengthLie)
        out.append(run)
        out.append(contentsOf: trailer)
        return out.bytes
    }
}
