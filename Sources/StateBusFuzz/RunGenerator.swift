import Foundation
import StateBusWire

/// One batch of a generated run: who made it and its changes.
struct GeneratedBatch {
    /// The writing view's id, or `nil` for the host's own change.
    var origin: String?
    var writeID: UInt64 = 0
    var changes: [IndexedChange]
}

/// Generates version-2 runs of updates of `Target` as a host publishes them, built with the
/// host's own `UpdateRunEncoder`: consecutive batches of whole values of every kind and of
/// changes inside values (map keys, list elements inserted, removed and moved), some made by
/// views (the replica's own id among them, as the echo of a write).
enum RunGenerator {
    /// The topic of `Target`'s runs, `u2/Target\0`.
    static let topic = Array("u2/\(FuzzObjects.target.name)".utf8) + [0]

    /// A valid run at the truth's next sequences; the truth takes its batches.
    static func validRun(truth: inout StandInTruth, viewID: String, using random: inout SeededRandom) -> [UInt8] {
        let generated = batches(count: Int.random(in: 1...(random.oneIn(8) ? 64 : 6), using: &random), viewID: viewID, using: &random)
        let bytes = encode(generated, object: truth.targetIndex, epoch: truth.epoch, firstSequence: truth.sequence + 1)
        for batch in generated {
            truth.sequence += 1
            for change in batch.changes { truth.apply(change, at: truth.sequence) }
        }
        return bytes
    }

    /// The `Publication` of `batches` as a host writes it.
    static func encode(_ batches: [GeneratedBatch], object: Int, epoch: UInt64, firstSequence: UInt64) -> [UInt8] {
        var encoder = UpdateRunEncoder()
        encoder.start(object: object, epoch: epoch, firstSequence: firstSequence)
        for batch in batches {
            encoder.beginBatch(origin: batch.origin, writeID: batch.writeID)
            for change in batch.changes { encoder.append(change) }
        }
        return encoder.publication()
    }

    /// `count` batches of well-formed changes; about one in five from a view.
    static func batches(count: Int, viewID: String, using random: inout SeededRandom) -> [GeneratedBatch] {
        (0..<count).map { _ in
            let changes = (0..<Int.random(in: 1...(random.oneIn(10) ? 12 : 3), using: &random)).map { _ in change(using: &random) }
            guard random.oneIn(5) else { return GeneratedBatch(changes: changes) }
            let origin = random.oneIn(3) ? viewID : FuzzObjects.viewIDs.randomElement(using: &random)!
            return GeneratedBatch(origin: origin, writeID: UInt64.random(in: 1...64, using: &random), changes: changes)
        }
    }

    /// One change of `Target` a host could publish (its property's kind is not enforced for
    /// `any`, and `null` goes anywhere now and then: a run carries what the host applied).
    static func change(using random: inout SeededRandom) -> IndexedChange {
        let index = Int.random(in: 0..<StandInTruth.names.count, using: &random)
        if random.oneIn(25) { return IndexedChange(property: index, value: .null) }
        switch StandInTruth.names[index] {
        case "text": return IndexedChange(property: index, value: .string(ValueGenerator.string(maxBytes: 64, using: &random)))
        case "ratio":
            let number = random.oneIn(2) ? ValueGenerator.doubles.randomElement(using: &random)! : Double.random(in: -1e6...1e6, using: &random)
            return IndexedChange(property: index, value: .double(number))
        case "flag": return IndexedChange(property: index, value: .bool(Bool.random(using: &random)))
        case "user": return userChange(index, using: &random)
        case "any":
            guard random.oneIn(3) else {
                return IndexedChange(property: index, value: Value(wire: ValueGenerator.value(depth: 3, maxBytes: 64, using: &random)))
            }
            let operation = ElementOperation.allCases.randomElement(using: &random)!
            return IndexedChange(
                property: index, path: ValuePath(wire: ValueGenerator.path(using: &random)),
                value: Value(wire: ValueGenerator.value(depth: 2, maxBytes: 32, using: &random)), operation: operation,
                position: Int.random(in: 0...4, using: &random))
        default:  // count, durable
            let number = random.oneIn(3) ? ValueGenerator.integers.randomElement(using: &random)! : Int64.random(in: -1000...1000, using: &random)
            return IndexedChange(property: index, value: .int(number))
        }
    }

    /// A change of the struct property `user`: the whole struct, a field, or its tags list.
    private static func userChange(_ index: Int, using random: inout SeededRandom) -> IndexedChange {
        let text = Value.string(ValueGenerator.string(maxBytes: 24, using: &random))
        let position = random.oneIn(10) ? Int(UInt32.max) : Int.random(in: 0...3, using: &random)
        switch Int.random(in: 0..<6, using: &random) {
        case 0:
            let tags = (0..<Int.random(in: 0...3, using: &random)).map { _ in Value.string(ValueGenerator.string(maxBytes: 8, using: &random)) }
            return IndexedChange(property: index, value: .map(["name": text, "email": "a@b.c", "tags": .list(tags)]))
        case 1: return IndexedChange(property: index, path: [.key("email")], value: text, operation: .replace, position: 0)
        case 2: return IndexedChange(property: index, path: [.key("tags")], value: text, operation: .insert, position: position)
        case 3: return IndexedChange(property: index, path: [.key("tags"), .index(position)], value: .null, operation: .remove, position: 0)
        case 4:
            return IndexedChange(
                property: index, path: [.key("tags"), .index(Int.random(in: 0...2, using: &random))], value: .null, operation: .move,
                position: position)
        default:
            return IndexedChange(
                property: index, path: [.key("tags"), .index(Int.random(in: 0...3, using: &random))], value: text, operation: .replace, position: 0)
        }
    }
}
