import Foundation
import PropertyBased
import StateBusWire
import SwiftProtobuf
import Testing

/// The hand-written codec of version 2's hot messages (runs, snapshot parts, writes and their
/// replies) against the code protoc generated from the same `.proto`: what one writes the
/// other reads, field for field, and bytes that are not a message never crash the reader.
@Suite("Hand-written protobuf codec")
struct WireCodecTests {
    static func deterministic(_ message: some SwiftProtobuf.Message) throws -> [UInt8] {
        var options = BinaryEncodingOptions()
        options.useDeterministicOrdering = true
        return try message.serializedBytes(options: options)
    }

    /// A random change: a whole value, or (when `pathed`) a path write or element operation.
    static func randomChange(using generator: inout SplitMix, property: Int, pathed: Bool) -> IndexedChange {
        let value = randomValue(using: &generator, depth: 2)
        guard pathed, generator.next() % 3 == 0 else { return IndexedChange(property: property, value: value) }
        let path = ValuePath([.key("k\(generator.next() % 3)"), .index(Int(generator.next() % 5)), .id(.string("t\(generator.next() % 9)"))])
        let operation = ElementOperation.allCases[Int(generator.next() % 4)]
        return IndexedChange(property: property, path: path, value: value, operation: operation, position: Int(generator.next() % 7))
    }

    @Test("a value written by hand is the generated code's deterministic encoding, and reads back")
    func values() async {
        await propertyCheck(count: 400, input: Gen.int(in: 0...Int.max)) { seed in
            let value = randomValue(seed: UInt64(seed), depth: 4)
            recordingErrors {
                let hand = ValueCodec.encoded(value, sortedKeys: true)
                #expect(hand == (try Self.deterministic(value.wire)))
                #expect(Value(wire: try Statebus_V1_Value(serializedBytes: ValueCodec.encoded(value))) == value)
                let generated: [UInt8] = try value.wire.serializedBytes()
                let read = try generated.withUnsafeBytes { buffer in
                    var reader = WireReader(buffer)
                    return try ValueCodec.read(&reader)
                }
                #expect(read == value)
            }
        }
    }

    @Test("strings read back whatever their length and script, and bytes that are not UTF-8 are refused")
    func strings() throws {
        func read(_ bytes: [UInt8]) throws -> Value {
            var writer = WireWriter(capacity: 8)
            writer.tag(5, .lengthDelimited)
            writer.varint(UInt64(bytes.count))
            writer.append(contentsOf: bytes)
            return try writer.bytes.withUnsafeBytes { buffer in
                var reader = WireReader(buffer)
                return try ValueCodec.read(&reader)
            }
        }
        for text in ["", "a", "done", "exactly8", "seventeen letters", "é", "naïve and café", String(repeating: "x", count: 31) + "✓", "👩‍💻 at work"] {
            #expect(try read(Array(text.utf8)) == .string(text), "\(text)")
        }
        // A stray continuation byte, a truncated sequence, an overlong encoding, at the start,
        // in the middle and past the first eight bytes.
        for bad: [UInt8] in [[0x80], [0x61, 0xC3], [0xC0, 0xAF], Array("abcdefghij".utf8) + [0xFF], Array("abc".utf8) + [0xED, 0xA0, 0x80]] {
            #expect(throws: WireDecodingError.self, "\(bad)") { try read(bad) }
        }
    }

    @Test("a change written by hand is the deterministic encoding of its wire form, and a write reads back")
    func changes() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var generator = SplitMix(state: UInt64(seed))
            let indexed = Self.randomChange(using: &generator, property: 0, pathed: true)
            var change = PropertyChange("p\(seed % 7)", at: indexed.path, to: indexed.value, expectedVersion: seed % 2 == 0 ? UInt64(seed % 5) : nil)
            change.operation = indexed.operation
            change.position = indexed.position
            recordingErrors {
                #expect(ChangeCodec.deterministicBytes(change) == (try Self.deterministic(change.wire)))
                let write = WireWrite(
                    protocolVersion: 2, requestID: 9, object: "Obj", writeID: UInt64(seed), viewID: "v-1", changes: [change, change])
                let bytes = WriteCodec.request(write)
                let generated = try Statebus_V1_Request(serializedBytes: bytes)
                #expect(generated.write.changes.map(PropertyChange.init(wire:)) == [change, change])
                #expect(generated.protocolVersion == 2 && generated.requestID == 9 && generated.write.viewID == "v-1")
                #expect(bytes.withUnsafeBytes(WriteCodec.decodeWrite) == write)
            }
        }
    }

    @Test("a write with a field this protocol does not define is left to the general decoder")
    func unknownFieldsInWrites() throws {
        var request = Statebus_V1_Request()
        request.protocolVersion = 2
        request.write.object = "Obj"
        var change = PropertyChange("p", to: .int(1)).wire
        var unknown = Statebus_V1_Value()
        try unknown.merge(serializedBytes: [0x48, 0x01])  // field 9: a kind from a newer protocol
        change.value = unknown
        request.write.changes = [change]
        let bytes: [UInt8] = try request.serializedBytes()
        #expect(bytes.withUnsafeBytes(WriteCodec.decodeWrite) == nil)
        // Another body is not a write.
        var hello = Statebus_V1_Request()
        hello.hello.viewID = "v"
        #expect((try hello.serializedBytes() as [UInt8]).withUnsafeBytes(WriteCodec.decodeWrite) == nil)
    }

    @Test("write replies read back, accepted and refused")
    func replies() throws {
        let accepted = WriteCodec.reply(protocolVersion: 2, requestID: 5, writeID: 7, outcome: .accepted(sequence: 99))
        let generated = try Statebus_V1_Reply(serializedBytes: accepted)
        #expect(generated.writeReply.accepted && generated.writeReply.sequence == 99 && generated.writeReply.writeID == 7)
        #expect(
            accepted.withUnsafeBytes(WriteCodec.decodeReply)
                == WriteCodec.DecodedReply(protocolVersion: 2, requestID: 5, writeID: 7, outcome: .accepted(sequence: 99)))
        let refused = WriteCodec.reply(
            protocolVersion: 1, requestID: 6, writeID: 8, outcome: .rejected(code: 8, message: "no @", object: "Profile", property: "email"))
        let wire = try Statebus_V1_Reply(serializedBytes: refused)
        #expect(!wire.writeReply.accepted && wire.writeReply.rejection.code == .validationFailed && wire.writeReply.rejection.message == "no @")
        #expect(wire.writeReply.rejection.property == "email" && wire.writeReply.sequence == 0)
        var welcome = Statebus_V1_Reply()
        welcome.welcome.epoch = 3
        #expect((try welcome.serializedBytes() as [UInt8]).withUnsafeBytes(WriteCodec.decodeReply) == nil)
    }

    /// Random batches: (origin, write id, changes).
    static func randomBatches(seed: UInt64) -> [(String?, UInt64, [IndexedChange])] {
        var generator = SplitMix(state: seed)
        return (0..<Int(1 + generator.next() % 6)).map { _ in
            let origin: String? = generator.next() % 2 == 0 ? "view-\(generator.next() % 3)" : nil
            let changes = (0..<Int(1 + generator.next() % 3)).map { _ in
                randomChange(using: &generator, property: Int(generator.next() % 300), pathed: true)
            }
            return (origin, origin == nil ? 0 : generator.next() % 1000, changes)
        }
    }

    static func readRun(_ bytes: [UInt8]) throws -> (UpdateRunReader, [(UpdateRunReader.Batch, [IndexedChange])]) {
        try bytes.withUnsafeBytes { buffer in
            var run = try UpdateRunReader(publication: buffer)
            var batches: [(UpdateRunReader.Batch, [IndexedChange])] = []
            while let batch = try run.nextBatch() {
                batches.append((batch, try (0..<batch.changes).map { _ in try run.nextChange() }))
            }
            return (run, batches)
        }
    }

    @Test("runs of batches read back by hand and by the generated code")
    func runs() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            let batches = Self.randomBatches(seed: UInt64(seed))
            var encoder = UpdateRunEncoder()
            encoder.start(object: 2, epoch: 77, firstSequence: 1000)
            for (origin, writeID, changes) in batches {
                encoder.beginBatch(origin: origin, writeID: writeID)
                for change in changes { encoder.append(change) }
            }
            let bytes = encoder.publication()
            #expect(encoder.encodedSize == bytes.count, "a run's encodedSize is its publication's size, exactly")
            recordingErrors {
                let (run, read) = try Self.readRun(bytes)
                #expect(run.object == 2 && run.epoch == 77 && run.firstSequence == 1000 && run.protocolVersion == 2)
                #expect(read.count == batches.count)
                for (index, ((batch, changes), expected)) in zip(read, batches).enumerated() {
                    #expect(batch.sequence == 1000 + UInt64(index) && batch.origin == expected.0 && batch.writeID == expected.1)
                    #expect(changes == expected.2)
                }
                let generated = try Statebus_V1_Publication(serializedBytes: bytes)
                #expect(generated.protocolVersion == 2 && generated.run.batches == UInt32(batches.count))
                #expect(generated.run.cells.count == batches.reduce(0) { $0 + $1.2.count })
                #expect(generated.run.origins == batches.compactMap(\.0))
                // The general path (a valid form the fast path does not take) reads the same.
                let (_, again) = try Self.readRun(try bytes.withUnsafeBytes(UpdateRunReader.canonical))
                #expect(again.map(\.0) == read.map(\.0) && again.map(\.1) == read.map(\.1))
            }
        }
    }

    @Test(
        "a run read for a copy that keeps only latest values leaves out exactly the costly whole values a later whole value of the property replaces")
    func supersededChangesLeftOut() async {
        var leftOutInAll = 0
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            // Few properties and many batches, so that properties change again within a run.
            var generator = SplitMix(state: UInt64(seed))
            let batches: [[IndexedChange]] = (0..<Int(2 + generator.next() % 12)).map { _ in
                (0..<Int(1 + generator.next() % 3)).map { _ in
                    Self.randomChange(using: &generator, property: Int(generator.next() % 3), pathed: true)
                }
            }
            var encoder = UpdateRunEncoder()
            encoder.start(object: 0, epoch: 1, firstSequence: 1)
            for changes in batches {
                encoder.beginBatch(origin: nil, writeID: 0)
                for change in changes { encoder.append(change) }
            }
            let bytes = encoder.publication()
            recordingErrors {
                let (_, all) = try Self.readRun(bytes)
                let live = try bytes.withUnsafeBytes { buffer in
                    var run = try UpdateRunReader(publication: buffer)
                    try run.leaveOutSupersededChanges()
                    var read: [(UpdateRunReader.Batch, [IndexedChange?])] = []
                    while let batch = try run.nextBatch() {
                        read.append((batch, try (0..<batch.changes).map { _ in try run.nextLiveChange() }))
                    }
                    return read
                }
                #expect(live.map(\.0) == all.map(\.0), "every batch is still read, with its sequence")
                // In run order: each change, and whether it was left out.
                let flat = zip(all, live).flatMap { whole, read in zip(whole.1, read.1).map { ($0, $1 == nil) } }
                for (index, (change, leftOut)) in flat.enumerated() {
                    let next = flat[(index + 1)...].first { $0.0.property == change.property }?.0
                    let costly: Bool
                    switch change.value {
                    case .string, .bytes, .list, .map: costly = true
                    default: costly = false
                    }
                    let superseded = change.replacesWholeValue && costly && next?.replacesWholeValue == true
                    #expect(
                        leftOut == superseded,
                        "change \(index) \(change) left out: \(leftOut); next of its property: \(next.map(String.init(describing:)) ?? "none")")
                    if leftOut { leftOutInAll += 1 }
                }
                // What is read is what was written, with the superseded values skipped over.
                let kept = zip(all, live).flatMap { whole, read in zip(whole.1, read.1).compactMap { $1 == nil ? nil : $0 } }
                #expect(kept == zip(all, live).flatMap { $1.1.compactMap { $0 } })
            }
        }
        #expect(leftOutInAll > 0, "the random runs left something out")
    }

    @Test("a run in a valid but unusual form (columns unpacked) is refused by the fast path and read by the general one")
    func unusualRun() throws {
        // The generated code writes packed columns too; splice an unpacked `ints` entry after them.
        var publication = Statebus_V1_Publication()
        publication.protocolVersion = 2
        publication.run.batches = 2
        publication.run.firstSequence = 5
        publication.run.cells = [0 << 3 | 0, 1 << 3 | 0]
        publication.run.ints = [41]
        var bytes: [UInt8] = try publication.serializedBytes()
        // run field 7 (ints), unpacked: key 0x38, zigzag(42) = 84; grow the run's length by 2.
        let runStart = bytes.firstIndex(of: 0x6A)!  // field 13, length-delimited
        bytes[runStart + 1] += 2
        bytes.append(contentsOf: [0x38, 84])
        #expect(throws: WireDecodingError.self) { try bytes.withUnsafeBytes { try UpdateRunReader(publication: $0) } }
        let canonical = try bytes.withUnsafeBytes(UpdateRunReader.canonical)
        let (_, read) = try Self.readRun(canonical)
        #expect(read.map(\.1) == [[IndexedChange(property: 0, value: .int(41))], [IndexedChange(property: 1, value: .int(42))]])
    }

    @Test("a run that claims more batches than it holds sizes or cells for is refused in any form, without allocating for the claim")
    func runClaimingBillionsOfBatches() throws {
        // The fuzzer's 19-byte publication (deploy/fuzz/regressions): 4,294,967,295 batches,
        // its one batch size unpacked, so the fast path hands it to the general one.
        let bytes: [UInt8] = [0x08, 0x02, 0x6A, 0x0F, 0x08, 0x00, 0x10, 0xB9, 0x60, 0x18, 0x01, 0x20, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x28, 0x00]
        #expect(throws: (any Error).self) { try bytes.withUnsafeBytes { try DecodedRun(publication: $0) } }
        #expect(throws: WireDecodingError.self) { try bytes.withUnsafeBytes(UpdateRunReader.canonical) }
        // Nor a run of no batches, nor one whose single-change batches have fewer cells.
        for (batches, cells) in [(0, [UInt32]()), (3, [0 << 3 | 0, 1 << 3 | 0])] {
            var publication = Statebus_V1_Publication()
            publication.protocolVersion = 2
            publication.run.batches = UInt32(batches)
            publication.run.firstSequence = 1
            publication.run.cells = cells
            publication.run.ints = cells.map { _ in 7 }
            var unusual: [UInt8] = try publication.serializedBytes()
            let runStart = unusual.firstIndex(of: 0x6A)!
            unusual[runStart + 1] += 2
            unusual.append(contentsOf: [0x38, 84])  // an unpacked `ints` entry: the general path
            #expect(throws: WireDecodingError.self, "\(batches) batches, \(cells.count) cells") {
                try unusual.withUnsafeBytes(UpdateRunReader.canonical)
            }
        }
    }

    @Test("a run whose element operation is one no version defines, negative on the wire, is refused in any form")
    func runWithNegativeElementOperation() throws {
        // The fuzzer's publication (deploy/fuzz/regressions/replica-run-negative-operation.bin):
        // one batch whose one cell is unpacked (so the fast path hands it to the general one)
        // and names a pathed change of operation -1, a 10-byte varint that protobuf reads as
        // an unrecognised enum case. The general path trapped converting it to UInt64.
        let operation: [UInt8] = [0x18, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]
        let run: [UInt8] = [0x08, 0x00, 0x10, 0xB9, 0x60, 0x18, 0x01, 0x20, 0x01, 0x30, 0x07, 0x62, UInt8(operation.count)] + operation
        let bytes: [UInt8] = [0x08, 0x02, 0x6A, UInt8(run.count)] + run
        #expect(throws: WireDecodingError.self) { try bytes.withUnsafeBytes { try UpdateRunReader(publication: $0) } }
        #expect(throws: WireDecodingError.self) { try bytes.withUnsafeBytes(UpdateRunReader.canonical) }
        #expect(throws: (any Error).self) { try bytes.withUnsafeBytes { try DecodedRun(publication: $0) } }
        // The same run with operation 3 (move) reads.
        let move: [UInt8] = [0x08, 0x02, 0x6A, 0x0F, 0x08, 0x00, 0x10, 0xB9, 0x60, 0x18, 0x01, 0x20, 0x01, 0x30, 0x07, 0x62, 0x02, 0x18, 0x03]
        let (_, read) = try Self.readRun(try move.withUnsafeBytes(UpdateRunReader.canonical))
        #expect(read.map(\.1) == [[IndexedChange(property: 0, path: .root, value: .null, operation: .move, position: 0)]])
    }

    @Test("snapshot parts read back by hand and by the generated code")
    func snapshotParts() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...Int.max)) { seed in
            var generator = SplitMix(state: UInt64(seed))
            let values = (0..<Int(generator.next() % 50)).map { _ in randomValue(using: &generator, depth: 2) }
            let versions = values.map { _ in generator.next() % 3 == 0 ? generator.next() % 100 : 0 }
            var encoder = SnapshotPartEncoder()
            for (index, value) in values.enumerated() { encoder.append(property: index + 10, value: value, version: versions[index]) }
            let reply = encoder.reply(requestID: 4, object: 1, epoch: 8, sequence: 12, part: 3, last: true)
            recordingErrors {
                let generated = try Statebus_V1_Reply(serializedBytes: reply)
                #expect(generated.protocolVersion == 2 && generated.requestID == 4)
                let part = generated.snapshotPart
                #expect(part.object == 1 && part.epoch == 8 && part.sequence == 12 && part.part == 3 && part.last)
                #expect(part.cells.count == values.count)
                let read = try reply.withUnsafeBytes { buffer in
                    var outer = WireReader(buffer)
                    var range: Range<Int>?
                    while let (field, type) = try outer.nextField() {
                        if field == 17 { range = try outer.lengthDelimited() } else { try outer.skip(type) }
                    }
                    var reader = try SnapshotPartReader(buffer, range: range!)
                    var read: [(Value, UInt64)] = []
                    while !reader.isAtEnd {
                        let (change, version) = try reader.next()
                        #expect(change.property == read.count + 10)
                        read.append((change.value, version))
                    }
                    return read
                }
                #expect(read.map(\.0) == values)
                #expect(read.map(\.1) == versions, "\(read.map(\.1)) \(versions)")
                let canonical = try Statebus_V1_Reply(serializedBytes: try SnapshotPartReader.canonicalReply(part, requestID: 4))
                #expect(canonical.snapshotPart.versions == part.versions && canonical.snapshotPart.cells == part.cells)
            }
        }
    }

    @Test("a run's encodedSize is exact after every change, past 127 and 16,383 changes in a batch; a part's size bound holds")
    func exactSizes() {
        var encoder = UpdateRunEncoder()
        encoder.start(object: 300, epoch: UInt64.max, firstSequence: 1 << 40)
        encoder.beginBatch(origin: "view", writeID: 1 << 62)
        for index in 0..<17_000 {
            encoder.append(property: index % 7, value: index % 3 == 0 ? .string("s\(index)") : .int(Int64(index)))
            if index < 300 || index % 997 == 0 || (16_380...16_390).contains(index) {
                #expect(encoder.encodedSize == encoder.publication().count, "after \(index + 1) changes")
            }
        }
        encoder.beginBatch(origin: nil, writeID: 0)
        encoder.append(property: 1, value: .null)
        #expect(encoder.encodedSize == encoder.publication().count)

        var part = SnapshotPartEncoder()
        let values: [Value] = [
            .string(String(repeating: "x", count: 300)), .int(-1), .map(["a": .list([.double(1), .bytes(Data([1, 2]))])]), .null, .bool(true)
        ]
        for index in 0..<2_000 {
            let value = values[index % values.count]
            let bound = part.replySizeBound(appending: value.encodedSizeBound, requestID: UInt64.max)
            part.append(property: index, value: value, version: UInt64(index) << 30)
            guard index < 100 || index % 97 == 0 else { continue }
            let size = part.reply(requestID: UInt64.max, object: 1 << 30, epoch: .max, sequence: .max, part: 1 << 30, last: true).count
            #expect(size <= bound, "part of \(index + 1) properties")
        }
    }

    @Test("bytes that are not a run, cut anywhere or changed anywhere, are refused, never a crash")
    func hostileRuns() async {
        var encoder = UpdateRunEncoder()
        encoder.start(object: 0, epoch: 1, firstSequence: 1)
        for (origin, writeID, changes) in Self.randomBatches(seed: 42) {
            encoder.beginBatch(origin: origin, writeID: writeID)
            for change in changes { encoder.append(change) }
        }
        let bytes = encoder.publication()
        await propertyCheck(count: 500, input: Gen.int(in: 0...Int.max)) { seed in
            var generator = SplitMix(state: UInt64(seed))
            var mutated = Array(bytes.prefix(Int(generator.next() % UInt64(bytes.count + 1))))
            for _ in 0..<Int(generator.next() % 4) where !mutated.isEmpty {
                mutated[Int(generator.next() % UInt64(mutated.count))] = UInt8(truncatingIfNeeded: generator.next())
            }
            // Either it reads (the change hit a value's bytes), or it throws: it never traps.
            _ = try? Self.readRun(mutated)
        }
    }

    @Test("a welcome's property kinds, read by hand or by the generated code: unknown and negative numbers mean any kind, never a trap")
    func welcomeKinds() throws {
        var welcome = Statebus_V1_Welcome()
        var object = Statebus_V1_ObjectSchema()
        object.name = "Thing"
        object.propertyTable.names = ["a", "b", "c", "d"]
        object.propertyTable.kinds = [.int, .any, .UNRECOGNIZED(42), .UNRECOGNIZED(-1)]
        welcome.objects = [object]
        let expected: [ValueKind?] = [.int, nil, nil, nil]
        #expect(WelcomeReader(welcome, object: "Thing").object?.kinds == expected)
        let bytes: [UInt8] = try welcome.serializedBytes()
        let byHand = try bytes.withUnsafeBytes { buffer in try WelcomeReader(buffer, range: 0..<buffer.count, object: "Thing") }
        #expect(byHand.object?.kinds == expected)
        #expect(byHand.object?.names == ["a", "b", "c", "d"])
    }
}
