import Foundation
import StateBusWire
import SwiftProtobuf

/// Generates inputs for a host: requests on its control socket and subscription frames on
/// its updates socket; random, mutated from the corpus, or valid with hostile values.
struct RequestGenerator {
    /// Real encoded requests and subscriptions to mutate.
    let corpus: [FuzzInput]
    /// The host's `maxMessageBytes`: requests are generated at, just above and far above it.
    let maxMessageBytes: Int

    /// The next input.
    func next(using random: inout SeededRandom) -> FuzzInput {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<8: return FuzzInput(channel: .request, frames: [random.bytes(random.length(upTo: 2048))])
        case 8..<45: return mutated(using: &random)
        case 45..<78: return FuzzInput(channel: .request, frames: [request(using: &random)])
        case 78..<82: return manyFrames(using: &random)
        case 82..<84: return atLimit(using: &random)
        default: return subscription(using: &random)
        }
    }

    private func mutated(using random: inout SeededRandom) -> FuzzInput {
        guard var input = corpus.randomElement(using: &random), !input.frames.isEmpty else {
            return FuzzInput(channel: .request, frames: [random.bytes(16)])
        }
        let other = corpus.randomElement(using: &random)?.frames.first ?? []
        let index = Int.random(in: 0..<input.frames.count, using: &random)
        input.frames[index] = Mutator.mutate(input.frames[index], splicing: other, using: &random)
        return input
    }

    /// A request frame: valid in shape, hostile in content; of either protocol version the
    /// host speaks (now and then of another), and a write in version 2's own encoding.
    func request(using random: inout SeededRandom) -> [UInt8] {
        var request = Statebus_V1_Request()
        request.protocolVersion =
            random.oneIn(12) ? [0, 3, 99, UInt32.max].randomElement(using: &random)! : StateBusProtocol.versions.randomElement(using: &random)!
        request.requestID = random.oneIn(8) ? [0, UInt64.max].randomElement(using: &random)! : UInt64.random(in: 1...1_000_000, using: &random)
        switch Int.random(in: 0..<12, using: &random) {
        case 0:
            var hello = Statebus_V1_Hello()
            hello.viewID = random.oneIn(2) ? FuzzObjects.viewIDs.randomElement(using: &random)! : ValueGenerator.string(maxBytes: 256, using: &random)
            hello.nodeName = ValueGenerator.string(maxBytes: 64, using: &random)
            hello.objects = (0..<Int.random(in: 0...3, using: &random)).map { _ in FuzzObjects.objectNames.randomElement(using: &random)! }
            // Version 2: the schema the view holds (the host's, none, or one it never had).
            hello.schemaHash = [0, FuzzObjects.schemaHash(of: FuzzObjects.all), UInt64.random(in: 0...UInt64.max, using: &random)].randomElement(
                using: &random)!
            if random.oneIn(8) { hello.sessionToken = Data(random.bytes(random.length(upTo: 64))) }
            if random.oneIn(16) { hello.relay = true }
            request.hello = hello
        case 1:
            var snapshot = Statebus_V1_SnapshotRequest()
            snapshot.object = FuzzObjects.objectNames.randomElement(using: &random)!
            request.snapshot = snapshot
        case 2: request.ping = Statebus_V1_Ping()
        case 3:
            var goodbye = Statebus_V1_Goodbye()
            goodbye.viewID = FuzzObjects.viewIDs.randomElement(using: &random)!
            request.goodbye = goodbye
        case 4: break  // no body
        case 5: request.views = Statebus_V1_ViewsRequest()
        case 6, 7, 8: return fastWrite(version: request.protocolVersion, requestID: request.requestID, using: &random)
        default: request.write = write(using: &random)
        }
        var bytes: [UInt8] = (try? request.serializedBytes()) ?? []
        if random.oneIn(20) { bytes += [0xF8, 0x07, 0x01] }  // an unknown top-level field
        return bytes
    }

    private func write(using random: inout SeededRandom) -> Statebus_V1_WriteRequest {
        var write = Statebus_V1_WriteRequest()
        write.object = random.oneIn(4) ? FuzzObjects.objectNames.randomElement(using: &random)! : (random.oneIn(6) ? "Sentinel" : "Target")
        // A few view ids and small write ids, so copies meet the write ledger's answers.
        write.viewID = FuzzObjects.viewIDs.randomElement(using: &random)!
        write.writeID = random.oneIn(10) ? UInt64.max : UInt64.random(in: 0...64, using: &random)
        write.changes = (0..<Int.random(in: 0...4, using: &random)).map { _ in
            var change = Statebus_V1_Change()
            change.property = FuzzObjects.propertyNames.randomElement(using: &random)!
            change.path = ValueGenerator.path(using: &random)
            if random.oneIn(25) {
                change.value = ValueGenerator.deep(levels: Int.random(in: 10...80, using: &random), using: &random)
            } else {
                change.value = ValueGenerator.value(depth: 3, maxBytes: random.oneIn(30) ? maxMessageBytes : 256, using: &random)
            }
            if random.oneIn(5) { change.expectedVersion = UInt64.random(in: 0...100, using: &random) }
            return change
        }
        return write
    }

    /// A write as a version-2 view encodes it (`WriteCodec`, the host's fast path): changes
    /// of every kind, element operations (insert, remove, move, positions far past the end,
    /// steps by element id) among them.
    private func fastWrite(version: UInt32, requestID: UInt64, using random: inout SeededRandom) -> [UInt8] {
        let object = random.oneIn(4) ? FuzzObjects.objectNames.randomElement(using: &random)! : (random.oneIn(6) ? "Sentinel" : "Target")
        let changes = (0..<Int.random(in: 0...4, using: &random)).map { _ in
            var path = ValuePath(wire: ValueGenerator.path(using: &random))
            if random.oneIn(6) { path = ValuePath(path.components + [.id(random.oneIn(2) ? .int(1) : .string("x"))]) }
            let value =
                random.oneIn(25)
                ? Value(wire: ValueGenerator.deep(levels: Int.random(in: 10...80, using: &random), using: &random))
                : Value(wire: ValueGenerator.value(depth: 3, maxBytes: random.oneIn(30) ? maxMessageBytes : 256, using: &random))
            var change = PropertyChange(
                FuzzObjects.propertyNames.randomElement(using: &random)!, at: path, to: value,
                expectedVersion: random.oneIn(5) ? UInt64.random(in: 0...100, using: &random) : nil)
            change.operation = random.oneIn(2) ? .replace : ElementOperation.allCases.randomElement(using: &random)!
            change.position = random.oneIn(8) ? Int(UInt32.max) : Int.random(in: 0...4, using: &random)
            return change
        }
        return WriteCodec.request(
            WireWrite(
                protocolVersion: version, requestID: requestID, object: object,
                writeID: random.oneIn(10) ? UInt64.max : UInt64.random(in: 0...64, using: &random),
                viewID: FuzzObjects.viewIDs.randomElement(using: &random)!, changes: changes))
    }

    private func manyFrames(using random: inout SeededRandom) -> FuzzInput {
        let count = random.oneIn(4) ? Int.random(in: 2...200, using: &random) : Int.random(in: 0...4, using: &random)
        return FuzzInput(
            channel: .request, frames: (0..<count).map { _ in random.oneIn(2) ? request(using: &random) : random.bytes(random.length(upTo: 64)) })
    }

    /// A write whose frame is exactly the limit, one above it, or past libzmq's
    /// `MAXMSGSIZE` (four times the limit), where libzmq drops the peer.
    private func atLimit(using random: inout SeededRandom) -> FuzzInput {
        let size = [
            maxMessageBytes - 1, maxMessageBytes, maxMessageBytes + 1, 4 * maxMessageBytes + 4096, 4 * maxMessageBytes + 4097, 5 * maxMessageBytes
        ]
        .randomElement(using: &random)!
        return FuzzInput(channel: .request, frames: [Self.write(ofSize: size)])
    }

    /// A valid write of `Target.text` whose encoding is exactly `size` bytes.
    static func write(ofSize size: Int) -> [UInt8] {
        var request = Statebus_V1_Request()
        request.protocolVersion = StateBusProtocol.version
        request.requestID = 1
        var write = Statebus_V1_WriteRequest()
        write.object = "Target"
        write.viewID = "fuzz-limit"
        var change = Statebus_V1_Change()
        change.property = "text"
        change.value.stringValue = ""
        write.changes = [change]
        request.write = write
        let empty = ((try? request.serializedBytes()) as [UInt8]?)?.count ?? 0
        // Each length prefix grows with its content: a few corrections reach the size (or,
        // at a varint boundary it cannot hit exactly, the nearest one above).
        var length = max(0, size - empty)
        var bytes: [UInt8] = []
        for _ in 0..<8 {
            request.write.changes[0].value.stringValue = String(repeating: "x", count: length)
            bytes = (try? request.serializedBytes()) ?? []
            if bytes.count == size { break }
            length = max(0, length + size - bytes.count)
        }
        return bytes
    }

    private func subscription(using random: inout SeededRandom) -> FuzzInput {
        if random.oneIn(3), let real = corpus.filter({ $0.channel == .subscription }).randomElement(using: &random) {
            var input = real
            input.frames[0] = Mutator.mutate(input.frames[0], splicing: [], using: &random)
            return input
        }
        let topics: [[UInt8]] = [
            Array("j/".utf8) + Array(ValueGenerator.string(maxBytes: 64, using: &random).utf8) + [0],
            Array("u/Target".utf8) + [0], Array("u/Sentinel".utf8) + [0], Array("u2/Target".utf8) + [0], Array("u2/Sentinel".utf8) + [0],
            Array("u2/Target".utf8), Array("hb".utf8) + [0], [],
            Array("j/".utf8), random.bytes(random.length(upTo: 4096))
        ]
        let marker: UInt8 = random.oneIn(8) ? UInt8.random(in: 0...255, using: &random) : (random.oneIn(4) ? 0 : 1)
        return FuzzInput(channel: .subscription, frames: [[marker] + topics.randomElement(using: &random)!])
    }
}
