/// Byte-level mutations of real messages, in the manner of libFuzzer's mutators: a valid
/// message a few bits away from another tests the decoder and the handler's checks far
/// better than random bytes, which protobuf rejects at the first byte.
enum Mutator {
    /// Values that sit on limits: protobuf varint ends, wire types, lengths; and version 2's
    /// keys and cells (a run's field 13, a part's field 17, the packed columns' 6 to 8, a
    /// cell's encodings 5 to 7).
    static let interesting: [UInt8] = [
        0x00, 0x01, 0x02, 0x05, 0x06, 0x07, 0x08, 0x0A, 0x10, 0x12, 0x1A, 0x22, 0x2A, 0x32, 0x3A, 0x3F, 0x40, 0x42, 0x62, 0x6A, 0x7F, 0x80, 0x8A,
        0xFE, 0xFF
    ]

    /// Applies one to four mutations to `bytes`; `other` is a second message to splice in.
    static func mutate(_ bytes: [UInt8], splicing other: [UInt8], using random: inout SeededRandom) -> [UInt8] {
        var result = bytes
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            mutateOnce(&result, other: other, using: &random)
        }
        return result
    }

    private static func mutateOnce(_ bytes: inout [UInt8], other: [UInt8], using random: inout SeededRandom) {
        let count = bytes.count
        func position() -> Int { count == 0 ? 0 : Int.random(in: 0..<count, using: &random) }
        switch Int.random(in: 0..<11, using: &random) {
        case 0 where count > 0:  // flip one bit
            bytes[position()] ^= 1 << UInt8.random(in: 0...7, using: &random)
        case 1 where count > 0:  // an interesting byte
            bytes[position()] = interesting.randomElement(using: &random)!
        case 2 where count > 0:  // truncate
            bytes.removeLast(Int.random(in: 1...count, using: &random))
        case 3:  // insert random bytes
            bytes.insert(contentsOf: random.bytes(random.length(upTo: 64)), at: Int.random(in: 0...count, using: &random))
        case 4 where count > 1:  // delete a range
            let start = position()
            bytes.removeSubrange(start..<min(count, start + Int.random(in: 1...16, using: &random)))
        case 5 where count > 1:  // duplicate a range
            let start = position()
            let range = start..<min(count, start + Int.random(in: 1...32, using: &random))
            bytes.insert(contentsOf: bytes[range], at: Int.random(in: 0...count, using: &random))
        case 6 where !other.isEmpty:  // splice: our head, the other's tail
            let cut = Int.random(in: 0...count, using: &random)
            let otherCut = Int.random(in: 0..<other.count, using: &random)
            bytes = Array(bytes[..<cut]) + other[otherCut...]
        case 7 where count > 0:  // a length becomes huge, zero or one more
            let at = position()
            let replacement: [UInt8] = [
                [0xFF, 0xFF, 0xFF, 0xFF, 0x0F], [0x00], [bytes[at] &+ 1], [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]
            ]
            .randomElement(using: &random)!
            bytes.replaceSubrange(at...at, with: replacement)
        case 8:  // nest: the message becomes a length-delimited field of itself
            bytes = nest(
                bytes, field: [10, 11, 12, 13, 14, 17, 1, 3, 4, 6, 7, 8].randomElement(using: &random)!, times: Int.random(in: 1...8, using: &random))
        case 9:  // an unknown field appended (proto3 keeps unknown fields)
            bytes += [0xF8, 0x07] + [UInt8.random(in: 0...0x7F, using: &random)]
        default:  // a run of one byte
            let run = [UInt8](repeating: interesting.randomElement(using: &random)!, count: Int.random(in: 1...64, using: &random))
            bytes.insert(contentsOf: run, at: Int.random(in: 0...count, using: &random))
        }
    }

    /// `bytes` wrapped `times` times as field `field` (wire type 2) of an enclosing message.
    static func nest(_ bytes: [UInt8], field: UInt64, times: Int) -> [UInt8] {
        var result = bytes
        for _ in 0..<times {
            result = varint(field << 3 | 2) + varint(UInt64(result.count)) + result
        }
        return result
    }

    /// The protobuf varint encoding of `value`.
    static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var bytes: [UInt8] = []
        repeat {
            bytes.append(UInt8(value & 0x7F) | (value > 0x7F ? 0x80 : 0))
            value >>= 7
        } while value > 0
        return bytes
    }
}
