import Foundation
import PropertyBased
import StateBusWire
import Testing

/// Builds a random value tree from a seed, bounded in depth and width.
func randomValue(seed: UInt64, depth: Int = 3) -> Value {
    var generator = SplitMix(state: seed)
    return randomValue(using: &generator, depth: depth)
}

func randomValue(using generator: inout SplitMix, depth: Int) -> Value {
    let choice = Int(generator.next() % (depth > 0 ? 8 : 6))
    switch choice {
    case 0: return .null
    case 1: return .bool(generator.next() % 2 == 0)
    case 2: return .int(Int64(bitPattern: generator.next()))
    case 3: return .double(Double(Int64(bitPattern: generator.next())) / 1024)
    case 4: return .string(String((0..<Int(generator.next() % 8)).map { _ in Character(UnicodeScalar(UInt8(97 + generator.next() % 26))) }))
    case 5: return .bytes(Data((0..<Int(generator.next() % 6)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }))
    case 6: return .list((0..<Int(generator.next() % 4)).map { _ in randomValue(using: &generator, depth: depth - 1) })
    default:
        var entries: [String: Value] = [:]
        for index in 0..<Int(generator.next() % 4) { entries["k\(index)"] = randomValue(using: &generator, depth: depth - 1) }
        return .map(entries)
    }
}

/// A small deterministic random number generator, so a failing seed reproduces.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

struct Sample: Codable, Equatable, Sendable {
    var count: Int
    var label: String
    var flag: Bool
    var ratio: Double
    var items: [Int]
    var nested: Address?
}

@Suite("Property-based round trips")
struct ValuePropertyTests {
    @Test("random value trees round-trip through the codec and the wire form")
    func randomTrees() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            let value = randomValue(seed: UInt64(seed))
            recordingErrors {
                let decoded = try ValueDecoder().decode(Value.self, from: ValueEncoder().encode(value))
                #expect(decoded == value)
            }
            #expect(Value(wire: value.wire) == value)
        }
    }

    @Test("the size bound found while checking nesting is the size bound, or nil exactly when the value nests deeper")
    func sizeWithNesting() async {
        await propertyCheck(count: 300, input: zip(Gen.int(in: 0...Int.max), Gen.int(in: 0...12))) { seed, limit in
            let value = randomValue(seed: UInt64(seed), depth: 4)
            let found = value.encodedSizeBound(nestingAtMost: limit)
            #expect(found == (value.nests(deeperThan: limit) ? nil : value.encodedSizeBound), "\(value) within \(limit)")
        }
    }

    @Test("random structs round-trip")
    func randomStructs() async {
        let generator = zip(
            Gen.int(in: -1_000_000...1_000_000),
            Gen.letterOrNumber.string(of: 0...12),
            Gen.bool,
            Gen.double(in: -1e9...1e9),
            Gen.int(in: -100...100).array(of: 0...6)
        )
        await propertyCheck(count: 300, input: generator, Gen.bool) { fields, hasNested in
            let (count, label, flag, ratio, items) = fields
            let sample = Sample(
                count: count, label: label, flag: flag, ratio: ratio, items: items,
                nested: hasNested ? Address(street: label, zip: count) : nil)
            recordingErrors {
                let decoded = try ValueDecoder().decode(Sample.self, from: ValueEncoder().encode(sample))
                #expect(decoded == sample)
            }
        }
    }

    @Test("setting at a random path changes only that path")
    func randomPaths() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var generator = SplitMix(state: UInt64(seed))
            let value = randomValue(using: &generator, depth: 3)
            // Walk a random existing path.
            var path = ValuePath.root
            var current = value
            while true {
                switch current {
                case .map(let entries) where !entries.isEmpty && generator.next() % 3 != 0:
                    let key = entries.keys.sorted()[Int(generator.next() % UInt64(entries.count))]
                    path = path.appending(.key(key))
                    current = entries[key]!
                    continue
                case .list(let items) where !items.isEmpty && generator.next() % 3 != 0:
                    let index = Int(generator.next() % UInt64(items.count))
                    path = path.appending(.index(index))
                    current = items[index]
                    continue
                default: break
                }
                break
            }
            let replacement = Value.string("replaced-\(seed)")
            recordingErrors {
                let updated = try value.setting(replacement, at: path)
                #expect(updated[path] == replacement)
                // Putting the old part back restores the original: nothing else moved.
                let restored = try updated.setting(current, at: path)
                #expect(restored == value)
            }
        }
    }
}

/// Runs a throwing check inside a non-throwing property closure; a thrown error fails the test.
func recordingErrors(_ body: () throws -> Void) {
    do { try body() } catch { Issue.record(error) }
}
