import StateBus

/// The answers one commit stored for one view, in one etcd value: per answer its write id
/// and digest (8 bytes each, little-endian), the object name's length (2 bytes) and the name.
enum StoredAnswerBatch {
    /// The value for these answers (all of one view).
    static func encode(_ answers: [StoredAnswer]) -> [UInt8] {
        var bytes: [UInt8] = []
        for answer in answers {
            append(answer.writeID, to: &bytes)
            append(answer.digest, to: &bytes)
            let name = Array(answer.object.utf8.prefix(Int(UInt16.max)))
            bytes.append(UInt8(name.count & 0xFF))
            bytes.append(UInt8(name.count >> 8))
            bytes += name
        }
        return bytes
    }

    /// The answers a value holds; a damaged tail is left out.
    static func decode(_ bytes: [UInt8], view: String) -> [StoredAnswer] {
        var answers: [StoredAnswer] = []
        var index = 0
        while index + 18 <= bytes.count {
            let writeID = read(bytes, at: index)
            let digest = read(bytes, at: index + 8)
            let length = Int(bytes[index + 16]) | Int(bytes[index + 17]) << 8
            index += 18
            guard index + length <= bytes.count else { break }
            let object = String(decoding: bytes[index..<index + length], as: UTF8.self)
            index += length
            answers.append(StoredAnswer(view: view, writeID: writeID, digest: digest, object: object))
        }
        return answers
    }

    private static func append(_ number: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: number >> UInt64(shift))) }
    }

    private static func read(_ bytes: [UInt8], at index: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[index + $1]) << (8 * UInt64($1)) }
    }
}
