import Foundation

/// One input of the fuzzer: the frames of one ZeroMQ message and where they go.
///
/// Corpus files and crash files share one small binary format, so a crash file can be
/// replayed (`--replay`) and a corpus entry read back: per input, the channel byte, a
/// little-endian `UInt32` frame count, then each frame as a `UInt32` length and its bytes.
struct FuzzInput: Sendable, Equatable {
    /// Where an input is sent.
    enum Channel: UInt8, Sendable, CaseIterable {
        /// A request on the host's control socket (DEALER → ROUTER).
        case request = 0x43  // "C"
        /// A subscription frame on the host's updates socket (XSUB → XPUB).
        case subscription = 0x53  // "S"
        /// A publication to a replica (topic and body, XPUB → SUB).
        case publication = 0x50  // "P"
        /// A reply to a replica on its control socket (ROUTER → DEALER).
        case reply = 0x52  // "R"
        /// A write the replica makes through its own API (one frame: a version-2 write
        /// request, as `WriteCodec` encodes it, whose changes are written), so that the
        /// answers and echoes a replica gets meet writes in flight, and a crash file replays them.
        case localWrite = 0x57  // "W"
    }

    var channel: Channel
    var frames: [[UInt8]]

    /// Bytes on the wire (all frames), for the counters.
    var size: Int { frames.reduce(0) { $0 + $1.count } }

    /// Appends this input's encoding to `buffer`.
    func encode(into buffer: inout [UInt8]) {
        buffer.append(channel.rawValue)
        Self.append(UInt32(frames.count), to: &buffer)
        for frame in frames {
            Self.append(UInt32(frame.count), to: &buffer)
            buffer.append(contentsOf: frame)
        }
    }

    /// The inputs encoded in `bytes`; stops at the first incomplete one (a log cut short
    /// by a crash still gives every input written whole).
    static func decodeAll(_ bytes: [UInt8]) -> [FuzzInput] {
        var inputs: [FuzzInput] = []
        var offset = 0
        func readUInt32() -> Int? {
            guard offset + 4 <= bytes.count else { return nil }
            let value = bytes[offset..<offset + 4].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
            offset += 4
            return value
        }
        while offset < bytes.count, let channel = Channel(rawValue: bytes[offset]) {
            offset += 1
            guard let count = readUInt32() else { break }
            var frames: [[UInt8]] = []
            for _ in 0..<count {
                guard let length = readUInt32(), offset + length <= bytes.count else { return inputs }
                frames.append(Array(bytes[offset..<offset + length]))
                offset += length
            }
            inputs.append(FuzzInput(channel: channel, frames: frames))
        }
        return inputs
    }

    private static func append(_ value: UInt32, to buffer: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { buffer.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
}
