import Foundation
import StateBusWire
import SwiftProtobuf

/// The flood's inputs: real requests (none of which can change the state: every write
/// names the read-only `locked`, or an object the host does not serve), their mutations,
/// random bytes, many-frame messages, and subscription frames.
enum FloodInputs {
    /// Real encoded requests to mutate.
    static func seeds() throws -> [[UInt8]] {
        var hello = Statebus_V1_Hello()
        hello.viewID = "flood-view"
        var snapshot = Statebus_V1_SnapshotRequest()
        snapshot.object = "Flood"
        var writes: [Statebus_V1_Request] = []
        for (object, value) in [("Flood", Value.int(1)), ("Flood", .string("x")), ("Nope", .int(1)), ("Flood", .list([.map(["k": .null])]))] {
            var write = Statebus_V1_WriteRequest()
            write.object = object
            write.viewID = "flood-view"
            write.writeID = UInt64(writes.count + 1)
            var change = Statebus_V1_Change()
            change.property = "locked"
            change.value = value.wire
            write.changes = [change]
            writes.append(FloodHost.request(id: 10 + UInt64(writes.count), .write(write)))
        }
        let requests =
            [
                FloodHost.request(id: 1, .hello(hello)), FloodHost.request(id: 2, .snapshot(snapshot)),
                FloodHost.request(id: 3, .ping(Statebus_V1_Ping())), FloodHost.request(id: 4, .goodbye(Statebus_V1_Goodbye()))
            ] + writes
        return try requests.map { try $0.serializedBytes() }
    }

    /// The next input: whether it goes to the updates socket, and its frames.
    static func next(seeds: [[UInt8]], using random: inout some RandomNumberGenerator) -> (Bool, [[UInt8]]) {
        func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) } }
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<15:
            return (false, [bytes(Int.random(in: 0...300, using: &random))])
        case 15..<75:
            var frame = seeds.randomElement(using: &random)!
            for _ in 0..<Int.random(in: 1...3, using: &random) { mutate(&frame, using: &random) }
            return (false, [frame])
        case 75..<80:
            return (false, (0..<Int.random(in: 2...20, using: &random)).map { _ in seeds.randomElement(using: &random)! })
        case 80..<85:
            return (false, [[], seeds.randomElement(using: &random)!])
        default:
            // 0x01 subscribe, 0x00 unsubscribe, anything else: a message to the publisher.
            let marker = [0x01, 0x01, 0x01, 0x00, UInt8.random(in: 0...255, using: &random)].randomElement(using: &random)!
            let topic = [
                Array("j/flood-\(Int.random(in: 0...999, using: &random))".utf8) + [0], Array("u/Flood".utf8) + [0],
                bytes(Int.random(in: 0...64, using: &random))
            ]
            .randomElement(using: &random)!
            return (true, [[marker] + topic])
        }
    }

    /// One mutation: a bit flip, an interesting byte, a cut, random bytes inserted, a range
    /// repeated, or the whole message nested as a field of itself.
    static func mutate(_ frame: inout [UInt8], using random: inout some RandomNumberGenerator) {
        let count = frame.count
        guard count > 0 else {
            frame = [0x08, 0x01]
            return
        }
        let at = Int.random(in: 0..<count, using: &random)
        switch Int.random(in: 0..<6, using: &random) {
        case 0: frame[at] ^= 1 << UInt8.random(in: 0...7, using: &random)
        case 1: frame[at] = [0x00, 0x7F, 0x80, 0xFF, 0x62, 0x0A].randomElement(using: &random)!
        case 2: frame.removeLast(Int.random(in: 1...count, using: &random))
        case 3: frame.insert(contentsOf: (0..<Int.random(in: 1...16, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }, at: at)
        case 4: frame.insert(contentsOf: frame[at..<min(count, at + 8)], at: at)
        default: frame = [0x62] + varint(frame.count) + frame  // field 12 (write), length-delimited
        }
    }

    static func varint(_ value: Int) -> [UInt8] {
        var value = UInt64(value)
        var bytes: [UInt8] = []
        repeat {
            bytes.append(UInt8(value & 0x7F) | (value > 0x7F ? 0x80 : 0))
            value >>= 7
        } while value > 0
        return bytes
    }
}
