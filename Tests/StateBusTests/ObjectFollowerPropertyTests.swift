import PropertyBased
import StateBusWire
import Testing

@testable import StateBus

/// `ObjectFollower`, the rules every follower of a host applies (a view's replica and a
/// relay's copy), through a relay's `ObjectCopy` against a host modelled by hand, over random
/// sequences of what a follower meets: the host's batches published in runs, runs lost or
/// delivered twice, snapshots asked for and answered in parts (an old request's answer too),
/// heartbeats, a held buffer small enough to pass its bound.
///
/// What a view and a relay rely on: whenever the copy says it is synced it holds exactly the
/// host's state at its sequence (never a state the host never had, never a half batch); a
/// lost run is found (by the next run or a heartbeat) and repaired by a snapshot; and once
/// everything is delivered the copy holds the host's last state.
@Suite("ObjectFollower against a model host")
struct ObjectFollowerPropertyTests {
    enum Action: CaseIterable {
        case change, change2, publish, deliver, deliver2, drop, duplicate, answer, answerStale, heartbeat
    }

    struct Step: Sendable, CustomStringConvertible {
        let kind: Int
        let property: Int
        let value: Int

        var description: String { "(\(kind), \(property), \(value))" }
    }

    static let actions = Action.allCases
    static let steps = zip(Gen.int(in: 0..<actions.count), Gen.int(in: 0..<3), Gen.int(in: 0...99))
        .map { Step(kind: $0, property: $1, value: $2) }
        .array(of: 1...80)

    /// The host: three Int properties, its state after every batch, and what it published.
    struct ModelHost {
        static let epoch: UInt64 = 7
        var values: [Value] = [.int(0), .int(0), .int(0)]
        var versions: [UInt64] = [0, 0, 0]
        var sequence: UInt64 = 0
        /// The state after each sequence.
        var history: [UInt64: (values: [Value], versions: [UInt64])] = [0: ([.int(0), .int(0), .int(0)], [0, 0, 0])]
        /// Batches made and not yet published.
        var unpublished: [(sequence: UInt64, changes: [IndexedChange])] = []
        var published: UInt64 = 0

        mutating func change(_ changes: [IndexedChange]) {
            sequence += 1
            for change in changes {
                values[change.property] = change.value
                versions[change.property] = sequence
            }
            history[sequence] = (values, versions)
            unpublished.append((sequence, changes))
        }

        /// One run of every batch not yet published, as the host's publication bytes.
        mutating func publish() -> [UInt8]? {
            guard let first = unpublished.first else { return nil }
            var encoder = UpdateRunEncoder()
            encoder.start(object: 0, epoch: Self.epoch, firstSequence: first.sequence)
            for batch in unpublished {
                encoder.beginBatch(origin: nil, writeID: 0)
                for change in batch.changes { encoder.append(change) }
            }
            published = unpublished.last!.sequence
            unpublished = []
            return encoder.publication()
        }

        /// The host's snapshot at its published sequence, in one or two parts.
        func snapshot(requestID: UInt64, parts: Int) -> [[UInt8]] {
            let (values, versions) = history[published]!
            let split = parts == 1 ? values.count : 1
            var replies: [[UInt8]] = []
            var encoder = SnapshotPartEncoder()
            for property in values.indices {
                encoder.append(property: property, value: values[property], version: versions[property])
                let last = property == values.count - 1
                if property + 1 == split || last {
                    replies.append(
                        encoder.reply(requestID: requestID, object: 0, epoch: Self.epoch, sequence: published, part: replies.count, last: last))
                    encoder.removeAll()
                }
            }
            return replies
        }
    }

    /// The relay's side of it: its copy, the request it waits for, the runs on their way.
    struct Follower {
        var copy = ObjectCopy(
            name: "Counter", index: 0, layout: PropertyLayout(names: ["a", "b", "c"], kinds: [.int, .int, .int]), epoch: ModelHost.epoch,
            maxBufferedBytes: 200)
        var nextRequestID: UInt64 = 1
        var wire: [[UInt8]] = []

        /// Asks for a snapshot, as the relay does whenever its copy needs one.
        mutating func askSnapshot() {
            copy.awaitSnapshot(requestID: nextRequestID, at: .now)
            nextRequestID += 1
        }

        mutating func take(_ publication: [UInt8]) throws {
            let run = try publication.withUnsafeBytes { try DecodedRun(publication: $0) }
            switch copy.apply(run, bytes: publication.count) {
            case .taken: break
            case .needsSnapshot: askSnapshot()
            case .otherEpoch: Issue.record("a run of the host's one epoch taken for another")
            }
        }

        mutating func takeParts(_ replies: [[UInt8]]) throws {
            for reply in replies {
                let outcome = try reply.withUnsafeBytes { buffer in
                    let envelope = try #require(ReplyEnvelope(buffer))
                    var part = try SnapshotPartReader(buffer, range: envelope.bodyRange)
                    return copy.receive(&part, requestID: envelope.requestID).outcome
                }
                switch outcome {
                case .taken: break
                case .needsSnapshot: askSnapshot()
                case .otherEpoch: Issue.record("a part of the host's one epoch taken for another")
                }
            }
        }
    }

    @Test("a synced copy always holds the host's state at its sequence, and ends with the host's last state")
    func randomDeliveries() async {
        await propertyCheck(count: 200, input: Self.steps) { steps in
            // Caught here: `propertyCheck` runs its body under `try?`, so an error thrown out
            // of it would pass the test unseen.
            do {
                try Self.check(steps)
            } catch {
                Issue.record("\(error) after \(steps)")
            }
        }
    }

    static func check(_ steps: [Step]) throws {
        var host = ModelHost()
        var follower = Follower()
        // Joining: runs that come before the snapshot wait for it.
        follower.askSnapshot()
        for step in steps {
            switch actions[step.kind] {
            case .change:
                host.change([IndexedChange(property: step.property, value: .int(Int64(step.value)))])
            case .change2:
                host.change([
                    IndexedChange(property: step.property, value: .int(Int64(step.value))),
                    IndexedChange(property: (step.property + 1) % 3, value: .int(Int64(step.value + 1)))
                ])
            case .publish:
                if let run = host.publish() { follower.wire.append(run) }
            case .deliver, .deliver2:
                if !follower.wire.isEmpty { try follower.take(follower.wire.removeFirst()) }
            case .drop:
                if !follower.wire.isEmpty { follower.wire.removeFirst() }
            case .duplicate:
                if let run = follower.wire.first { try follower.take(run) }
            case .answer:
                // The host answers the request the copy waits for, at its published state
                // (the runs still on the wire are older or newer; both are handled).
                if follower.copy.snapshotRequestID != 0 {
                    try follower.takeParts(host.snapshot(requestID: follower.copy.snapshotRequestID, parts: 1 + step.value % 2))
                }
            case .answerStale:
                // An answer to a request the copy no longer waits for changes nothing.
                let before = (follower.copy.values, follower.copy.sequence, follower.copy.isSynced)
                try follower.takeParts(host.snapshot(requestID: follower.nextRequestID + 100, parts: 2))
                #expect(follower.copy.values == before.0 && follower.copy.sequence == before.1 && follower.copy.isSynced == before.2)
            case .heartbeat:
                // Heartbeats follow the runs on the same connection: one is sent when the
                // wire is empty, announcing what the host published.
                if follower.wire.isEmpty, follower.copy.lostUpdates(announced: host.published) { follower.askSnapshot() }
            }
            try expectHostState(follower.copy, host: host, after: step)
        }
        // Everything delivered, then a heartbeat, then the snapshot that asks for, if any.
        if let run = host.publish() { follower.wire.append(run) }
        while !follower.wire.isEmpty { try follower.take(follower.wire.removeFirst()) }
        if follower.copy.lostUpdates(announced: host.published) { follower.askSnapshot() }
        while !follower.copy.isSynced {
            if follower.copy.snapshotRequestID == 0 { follower.askSnapshot() }
            try follower.takeParts(host.snapshot(requestID: follower.copy.snapshotRequestID, parts: 2))
        }
        #expect(follower.copy.sequence == host.published, "the copy at \(follower.copy.sequence), the host at \(host.published)")
        #expect(follower.copy.values == host.values && follower.copy.versions == host.versions)
    }

    /// A synced copy holds exactly the host's state at its sequence.
    static func expectHostState(_ copy: ObjectCopy, host: ModelHost, after step: Step) throws {
        guard copy.isSynced else { return }
        let state = try #require(host.history[copy.sequence], "the copy is at \(copy.sequence), a sequence the host never had")
        #expect(copy.values == state.values && copy.versions == state.versions, "after \(step) at \(copy.sequence)")
    }

    @Test("a run, a snapshot part and a heartbeat's sequence of another host run are not taken")
    func otherEpoch() throws {
        var host = ModelHost()
        var follower = Follower()
        follower.askSnapshot()
        try follower.takeParts(host.snapshot(requestID: 1, parts: 1))
        #expect(follower.copy.isSynced)

        host.change([IndexedChange(property: 0, value: .int(5))])
        var encoder = UpdateRunEncoder()
        encoder.start(object: 0, epoch: ModelHost.epoch + 1, firstSequence: 1)
        encoder.beginBatch(origin: nil, writeID: 0)
        encoder.append(IndexedChange(property: 0, value: .int(5)))
        let run = try encoder.publication().withUnsafeBytes { try DecodedRun(publication: $0) }
        #expect(follower.copy.apply(run) == .otherEpoch)
        #expect(follower.copy.values == [.int(0), .int(0), .int(0)], "nothing of another run applied")

        follower.askSnapshot()
        var parts = SnapshotPartEncoder()
        parts.append(property: 0, value: .int(9), version: 1)
        let reply = parts.reply(requestID: follower.copy.snapshotRequestID, object: 0, epoch: ModelHost.epoch + 1, sequence: 1, part: 0, last: false)
        let outcome = try reply.withUnsafeBytes { buffer in
            let envelope = try #require(ReplyEnvelope(buffer))
            var part = try SnapshotPartReader(buffer, range: envelope.bodyRange)
            return follower.copy.receive(&part, requestID: envelope.requestID).outcome
        }
        #expect(outcome == .otherEpoch)
    }

    @Test("runs held past the bound are dropped and a snapshot is asked for again; the copy then ends right")
    func heldPastBound() throws {
        var host = ModelHost()
        var follower = Follower()
        follower.askSnapshot()
        let first = follower.copy.snapshotRequestID
        var asked = false
        for value in 0..<50 {
            host.change([IndexedChange(property: value % 3, value: .int(Int64(value)))])
            let published = host.publish()
            let run = try #require(published)
            try follower.take(run)
            if follower.copy.snapshotRequestID != first {
                asked = true
                break
            }
        }
        #expect(asked, "200 bytes of held runs passed without asking for a new snapshot")
        try follower.takeParts(host.snapshot(requestID: follower.copy.snapshotRequestID, parts: 2))
        #expect(follower.copy.isSynced && follower.copy.values == host.values && follower.copy.sequence == host.published)
    }
}
