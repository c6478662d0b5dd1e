import StateBusWire
import SwiftProtobuf

/// What the replica side's stand-in host holds true: the state a replica must converge on
/// after it resynchronises.
struct StandInTruth {
    var epoch: UInt64
    var sequence: UInt64 = 0
    var values: [String: Statebus_V1_Value]
}

/// Generates publications for a replica: valid batches that move the truth on, and
/// mutated or hostile ones (wrong epochs, gaps, unknown properties, bad paths, deep values,
/// odd topics and frame counts) that it must survive.
struct PublicationGenerator {
    /// Real encoded publications and replies to mutate.
    let corpus: [FuzzInput]
    /// The replica's view id, so its own join topic and echoes are hit too.
    let viewID: String

    static let topic = Array("u/Target".utf8) + [0]

    /// The next input; a valid batch also advances `truth`.
    func next(truth: inout StandInTruth, using random: inout SeededRandom) -> FuzzInput {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<30:
            let batch = validBatch(truth: &truth, using: &random)
            return FuzzInput(channel: .publication, frames: [Self.topic, Self.encode([batch])])
        case 30..<55:
            var frames = [Self.topic, Self.encode([hostileBatch(truth: truth, using: &random)])]
            if random.oneIn(2) {
                frames[1] = Mutator.mutate(frames[1], splicing: corpus.randomElement(using: &random)?.frames.last ?? [], using: &random)
            }
            return FuzzInput(channel: .publication, frames: frames)
        case 55..<75:
            guard var input = corpus.filter({ $0.channel == .publication && !$0.frames.isEmpty }).randomElement(using: &random) else {
                return FuzzInput(channel: .publication, frames: [Self.topic, random.bytes(random.length(upTo: 256))])
            }
            input.frames[input.frames.count - 1] = Mutator.mutate(input.frames.last!, splicing: [], using: &random)
            return input
        case 75..<85:
            return FuzzInput(channel: .publication, frames: [topic(using: &random), control(truth: truth, using: &random)])
        case 85..<92:
            let count = [0, 1, 3, 7].randomElement(using: &random)!
            return FuzzInput(
                channel: .publication, frames: (0..<count).map { _ in random.oneIn(2) ? Self.topic : random.bytes(random.length(upTo: 256)) })
        default:
            guard var input = corpus.filter({ $0.channel == .reply }).randomElement(using: &random) else {
                return FuzzInput(channel: .reply, frames: [random.bytes(random.length(upTo: 512))])
            }
            input.frames[0] = Mutator.mutate(input.frames[0], splicing: [], using: &random)
            return input
        }
    }

    /// The next batch of the truth: well-typed values for real properties.
    func validBatch(truth: inout StandInTruth, using random: inout SeededRandom) -> Statebus_V1_UpdateBatch {
        truth.sequence += 1
        var batch = Statebus_V1_UpdateBatch()
        batch.object = "Target"
        batch.epoch = truth.epoch
        batch.sequence = truth.sequence
        var change = Statebus_V1_Change()
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            change.property = "text"
            change.value.stringValue = ValueGenerator.string(maxBytes: 64, using: &random)
        case 1:
            change.property = "count"
            change.value.intValue = Int64.random(in: -1000...1000, using: &random)
        case 2:
            change.property = "flag"
            change.value.boolValue = Bool.random(using: &random)
        default:
            change.property = "any"
            change.value = ValueGenerator.value(depth: 3, maxBytes: 64, using: &random)
        }
        truth.values[change.property] = change.value
        batch.changes = [change]
        return batch
    }

    private func hostileBatch(truth: StandInTruth, using random: inout SeededRandom) -> Statebus_V1_UpdateBatch {
        var batch = Statebus_V1_UpdateBatch()
        batch.object = random.oneIn(6) ? FuzzObjects.objectNames.randomElement(using: &random)! : "Target"
        batch.epoch = random.oneIn(5) ? UInt64.random(in: 0...UInt64.max, using: &random) : truth.epoch
        let sequences = [truth.sequence + 1, truth.sequence, truth.sequence + 2, 0, UInt64.max, truth.sequence &+ 1000]
        batch.sequence = sequences.randomElement(using: &random)!
        batch.origin = random.oneIn(3) ? viewID : FuzzObjects.viewIDs.randomElement(using: &random)!
        batch.writeID = UInt64.random(in: 0...8, using: &random)
        batch.changes = (0..<Int.random(in: 0...4, using: &random)).map { _ in
            var change = Statebus_V1_Change()
            change.property = FuzzObjects.propertyNames.randomElement(using: &random)!
            change.path = ValueGenerator.path(using: &random)
            change.value =
                random.oneIn(20)
                ? ValueGenerator.deep(levels: Int.random(in: 10...80, using: &random), using: &random)
                : ValueGenerator.value(depth: 3, maxBytes: random.oneIn(50) ? 1 << 20 : 128, using: &random)
            return change
        }
        return batch
    }

    /// A heartbeat or join marker body, right or wrong.
    private func control(truth: StandInTruth, using random: inout SeededRandom) -> [UInt8] {
        var publication = Statebus_V1_Publication()
        publication.protocolVersion = random.oneIn(8) ? 7 : StateBusProtocol.version
        if random.oneIn(2) {
            var heartbeat = Statebus_V1_Heartbeat()
            heartbeat.epoch = random.oneIn(8) ? UInt64.random(in: 0...UInt64.max, using: &random) : truth.epoch
            var sequence = Statebus_V1_ObjectSequence()
            sequence.object = random.oneIn(4) ? "Other" : "Target"
            sequence.sequence = [truth.sequence, truth.sequence + 1, 0, UInt64.max].randomElement(using: &random)!
            heartbeat.sequences = [sequence]
            publication.heartbeat = heartbeat
        } else {
            var marker = Statebus_V1_JoinMarker()
            marker.viewID = random.oneIn(2) ? viewID : FuzzObjects.viewIDs.randomElement(using: &random)!
            marker.epoch = random.oneIn(3) ? truth.epoch : UInt64.random(in: 0...UInt64.max, using: &random)
            publication.joinMarker = marker
        }
        if random.oneIn(4) { publication.updates = [hostileBatch(truth: truth, using: &random)] }
        return (try? publication.serializedBytes()) ?? []
    }

    private func topic(using random: inout SeededRandom) -> [UInt8] {
        [Self.topic, Array("hb".utf8) + [0], Array("j/\(viewID)".utf8) + [0]].randomElement(using: &random)!
    }

    /// A publication of `batches`, as a host sends it.
    static func encode(_ batches: [Statebus_V1_UpdateBatch]) -> [UInt8] {
        var publication = Statebus_V1_Publication()
        publication.protocolVersion = StateBusProtocol.version
        publication.updates = batches
        return (try? publication.serializedBytes()) ?? []
    }
}
