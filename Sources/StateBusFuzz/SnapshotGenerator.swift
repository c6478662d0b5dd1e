import StateBusWire

/// Generates version-2 snapshot replies: the `SnapshotPart`s a host sends for the truth
/// (built with the host's own `SnapshotPartEncoder`, split into parts by size as a host
/// splits them), and series of parts built field by field with something wrong: parts out
/// of order or missing, a last part that comes early or never, sequences that disagree,
/// properties twice or out of range, a change inside a value, versions that do not match
/// the cells, another epoch or object.
enum SnapshotGenerator {
    /// The parts of the truth's snapshot, each at most about `limit` bytes (a single larger
    /// property travels alone), as a host answers request `requestID`.
    static func parts(truth: StandInTruth, requestID: UInt64, limit: Int) -> [[UInt8]] {
        var encoder = SnapshotPartEncoder()
        var replies: [[UInt8]] = []
        var property = 0
        repeat {
            encoder.removeAll()
            while property < truth.values.count, encoder.count == 0 || encoder.encodedSize + truth.values[property].encodedSizeBound <= limit {
                encoder.append(property: property, value: truth.values[property], version: truth.versions[property])
                property += 1
            }
            replies.append(
                encoder.reply(
                    requestID: requestID, object: truth.targetIndex, epoch: truth.epoch, sequence: truth.sequence, part: replies.count,
                    last: property == truth.values.count))
        } while property < truth.values.count
        return replies
    }

    /// A series of parts answering `requestID`, with something wrong in it (or, now and
    /// then, nothing: another answer to the same request that the replica may take first).
    static func hostileParts(truth: StandInTruth, requestID: UInt64, using random: inout SeededRandom) -> [[UInt8]] {
        var changes = truth.values.enumerated().map { IndexedChange(property: $0.offset, value: $0.element) }
        var versions = truth.values.indices.map { _ in UInt64.random(in: 0...truth.sequence, using: &random) }
        var header = (object: UInt64(truth.targetIndex), epoch: truth.epoch, sequence: truth.sequence)
        var lastAt: Int?
        var partNumbers: [UInt64]?
        var sequenceDrift = false
        var form = RawColumns.Form.canonical
        var damageColumns = false
        var unpackedVersions = false
        for _ in 0..<Int.random(in: 1...2, using: &random) {
            switch Int.random(in: 0..<11, using: &random) {
            case 0 where !changes.isEmpty: changes.append(changes.randomElement(using: &random)!)  // a property twice
            case 1 where !changes.isEmpty: changes.removeLast(Int.random(in: 1...changes.count, using: &random))  // too few
            case 2: changes.shuffle(using: &random)  // out of index order (valid: each once)
            case 3 where !changes.isEmpty:  // a change inside a value, which snapshots never hold
                changes[Int.random(in: 0..<changes.count, using: &random)] = RunGenerator.change(using: &random)
            case 4: versions = random.oneIn(2) ? [] : versions + [1, 2, 3]
            case 5: unpackedVersions = true
            case 6: header.epoch = random.oneIn(2) ? truth.epoch &+ 1 : 0
            case 7:
                header.object = [1 - UInt64(truth.targetIndex), 7].randomElement(using: &random)!
                header.sequence = [0, truth.sequence &+ 1, UInt64.max].randomElement(using: &random)!
            case 8: partNumbers = [[1, 2, 3], [0, 0, 1], [0, 2, 3], [0, 1, 1]].randomElement(using: &random)!
            case 9: lastAt = [-1, 0, 1].randomElement(using: &random)!  // never last, or last early
            default:
                damageColumns = true
                form = RawColumns.Form.allCases.randomElement(using: &random)!
            }
            if random.oneIn(4) { sequenceDrift = true }
        }
        // Split into up to three parts.
        let cuts = changes.isEmpty ? [0] : (0..<Int.random(in: 1...3, using: &random)).map { _ in Int.random(in: 0...changes.count, using: &random) }
        let bounds = ([0] + cuts.sorted() + [changes.count]).adjacentPairs()
        var replies: [[UInt8]] = []
        for (index, range) in bounds.enumerated() {
            var columns = RawColumns(Array(changes[range.0..<range.1]))
            if damageColumns { columns.damage(propertyCount: truth.values.count, using: &random) }
            let partVersions = Array(versions.dropFirst(range.0).prefix(range.1 - range.0))
            var body = WireWriter()
            body.field(1, varint: header.object)
            body.field(2, varint: header.epoch)
            body.field(3, varint: sequenceDrift && index > 0 ? header.sequence &+ UInt64(index) : header.sequence)
            body.field(4, varint: partNumbers.map { index < $0.count ? $0[index] : UInt64(index) } ?? UInt64(index))
            let isLast = lastAt.map { $0 == -1 ? false : index == $0 } ?? (index == bounds.count - 1)
            body.field(5, bool: isLast)
            columns.write(into: &body, form: form, withPathed: false)
            var packed = WireWriter()
            for version in partVersions { packed.varint(version) }
            if unpackedVersions {
                for version in partVersions { body.field(12, varint: version) }
            } else {
                body.field(12, packed: packed)
            }
            var reply = WireWriter()
            reply.field(1, varint: 2)
            reply.field(2, varint: requestID)
            reply.field(17, message: { $0.append(body) })
            replies.append(reply.bytes)
        }
        return replies
    }
}

extension Array {
    /// Each element with the next one.
    fileprivate func adjacentPairs() -> [(Element, Element)] {
        count < 2 ? [] : (1..<count).map { (self[$0 - 1], self[$0]) }
    }
}
