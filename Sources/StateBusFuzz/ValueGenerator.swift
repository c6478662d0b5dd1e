import Foundation
import StateBusWire

/// Generates wire values, from ordinary to hostile: limits of every kind, invalid
/// combinations, deep nesting and huge strings.
enum ValueGenerator {
    static let integers: [Int64] = [0, 1, -1, 42, Int64.max, Int64.min, Int64(Int32.max) + 1, -(1 << 53)]
    static let doubles: [Double] = [0, -0.0, 0.5, .nan, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 1e300]
    static let strings: [String] = ["", "hi", "a@b", "\0", "\u{FEFF}", "é", "🧪", "no-at-sign", String(repeating: "ab", count: 100)]

    /// A random value at most `depth` levels deep, its strings at most `maxBytes` long.
    static func value(depth: Int, maxBytes: Int, using random: inout SeededRandom) -> Statebus_V1_Value {
        var value = Statebus_V1_Value()
        switch Int.random(in: 0..<(depth > 0 ? 11 : 8), using: &random) {
        case 0: value.kind = .nullValue(.nullValue)
        case 1: value.kind = .boolValue(Bool.random(using: &random))
        case 2:
            value.kind = .intValue(
                random.oneIn(2) ? integers.randomElement(using: &random)! : Int64.random(in: Int64.min...Int64.max, using: &random))
        case 3: value.kind = .doubleValue(doubles.randomElement(using: &random)!)
        case 4: value.kind = .stringValue(string(maxBytes: maxBytes, using: &random))
        case 5: value.kind = .bytesValue(Data(random.bytes(random.length(upTo: maxBytes))))
        case 6: break  // no kind set: reads as null
        case 7: value.kind = .stringValue(strings.randomElement(using: &random)!)
        case 8, 9:
            var list = Statebus_V1_ListValue()
            list.items = (0..<Int.random(in: 0...4, using: &random)).map { _ in self.value(depth: depth - 1, maxBytes: maxBytes / 4, using: &random) }
            value.kind = .listValue(list)
        default:
            var map = Statebus_V1_MapValue()
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                let key =
                    random.oneIn(2) ? ["name", "email", "tags", "list", "x", ""].randomElement(using: &random)! : string(maxBytes: 32, using: &random)
                map.entries[key] = self.value(depth: depth - 1, maxBytes: maxBytes / 4, using: &random)
            }
            value.kind = .mapValue(map)
        }
        return value
    }

    /// A value nested `levels` deep (lists or maps), past protobuf's depth limit when
    /// `levels` is above about 20.
    static func deep(levels: Int, using random: inout SeededRandom) -> Statebus_V1_Value {
        var value = Statebus_V1_Value()
        value.kind = .intValue(1)
        for _ in 0..<levels {
            var outer = Statebus_V1_Value()
            if Bool.random(using: &random) {
                var list = Statebus_V1_ListValue()
                list.items = [value]
                outer.kind = .listValue(list)
            } else {
                var map = Statebus_V1_MapValue()
                map.entries["k"] = value
                outer.kind = .mapValue(map)
            }
            value = outer
        }
        return value
    }

    /// A string of printable, multi-byte and control characters.
    static func string(maxBytes: Int, using random: inout SeededRandom) -> String {
        let length = random.length(upTo: max(0, maxBytes))
        if random.oneIn(4) { return String(repeating: "x", count: length) }
        var scalars = String.UnicodeScalarView()
        for _ in 0..<min(length, 4096) {
            let pick = Int.random(in: 0..<10, using: &random)
            let code: UInt32 =
                pick < 7
                ? UInt32.random(in: 0x20...0x7E, using: &random)
                : pick < 8 ? UInt32.random(in: 0...0x1F, using: &random) : UInt32.random(in: 0xA0...0x1F9FF, using: &random)
            if let scalar = Unicode.Scalar(code) { scalars.append(scalar) }
        }
        return String(scalars)
    }

    /// A path of up to six steps: keys, indexes (some far out of range), empty steps.
    static func path(using random: inout SeededRandom) -> [Statebus_V1_PathComponent] {
        (0..<(random.oneIn(2) ? 0 : Int.random(in: 1...6, using: &random))).map { _ in
            var step = Statebus_V1_PathComponent()
            switch Int.random(in: 0..<4, using: &random) {
            case 0: step.key = ["name", "email", "tags", "list", "k", ""].randomElement(using: &random)!
            case 1: step.index = UInt32.random(in: 0...3, using: &random)
            case 2: step.index = [UInt32.max, UInt32(Int32.max), 1000].randomElement(using: &random)!
            default: break  // neither set: reads as the key ""
            }
            return step
        }
    }
}
