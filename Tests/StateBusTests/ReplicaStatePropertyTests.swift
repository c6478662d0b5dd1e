import PropertyBased
import StateBusWire
import Testing

@testable import StateBus

/// `ReplicaState` against a model that recomputes everything from scratch: what the view
/// shows is the host's confirmed values with every still-pending write of the view applied
/// on top, in write order (Docs.docc/SyncSemantics.md, proto/PROTOCOL.md "Writes").
///
/// The real type keeps an incremental overlay and takes shortcuts when nothing is pending;
/// the model keeps neither, so a shortcut that forgets a case shows up as a difference in
/// the visible values or in the set of names an event reports as changed.
@Suite("ReplicaState against a reference model")
struct ReplicaStatePropertyTests {
    /// One event, drawn from small numbers so that shrinking yields short readable cases.
    struct Step: Sendable, CustomStringConvertible {
        let kind: Int
        let a: Int
        let b: Int
        let c: Int

        var description: String { "(\(kind), \(a), \(b), \(c))" }
    }

    static let steps = zip(Gen.int(in: 0...8), Gen.int(in: 0...5), Gen.int(in: 0...5), Gen.int(in: 0...3))
        .map { Step(kind: $0, a: $1, b: $2, c: $3) }
        .array(of: 1...40)

    @Test("visible values and reported changes match the model after every event")
    func randomEvents() async {
        await propertyCheck(count: 300, input: Self.steps) { steps in
            var real = ReplicaState()
            var model = ReplicaModel()
            // Joined before anything else happens: a view applies updates only once live.
            let start = Dictionary(uniqueKeysWithValues: ReplicaModel.properties.map { ($0, Value.int(0)) })
            _ = real.applySnapshot(epoch: 0, sequence: 0, values: start, versions: start.mapValues { _ in 0 })
            model.applySnapshot(epoch: 0, sequence: 0, values: start)
            // A follower (a `@SharedModel`'s bus) that takes what changed after every event:
            // a change the state does not note for it leaves the follower behind.
            var follower = real.follow()
            var nextWriteID: UInt64 = 1
            for (index, step) in steps.enumerated() {
                let shownBefore = model.visible
                let reported: Set<String>
                switch step.kind {
                case 0, 1:
                    // The view writes (the most common event in a view's life).
                    let changes = Self.changes(step)
                    let id = nextWriteID
                    nextWriteID += 1
                    reported = real.localWrite(id: id, changes: changes, bytes: 10)
                    model.pending.append(.init(id: id, changes: changes))
                case 2:
                    // Another view's write, published by the host. Its write id may equal
                    // one of ours: only the origin makes it an echo.
                    let changes = Self.changes(step)
                    var changed = Set<String>()
                    let sequence = model.sequence + 1
                    real.applyBatch(sequence: sequence, changes: changes, origin: "other", writeID: UInt64(step.c), myViewID: "me", changed: &changed)
                    reported = changed
                    model.applyBatch(sequence: sequence, changes: changes, echoOf: nil)
                case 3:
                    // The echo of one of our pending writes (or of one already forgotten).
                    let write = model.pending.isEmpty ? nil : model.pending[step.a % model.pending.count]
                    let id = write?.id ?? UInt64(step.a) + 1_000
                    let changes = write?.changes ?? Self.changes(step)
                    var changed = Set<String>()
                    let sequence = model.sequence + 1
                    real.applyBatch(sequence: sequence, changes: changes, origin: "me", writeID: id, myViewID: "me", changed: &changed)
                    reported = changed
                    model.applyBatch(sequence: sequence, changes: changes, echoOf: id)
                case 4:
                    // The host accepts a write, before or after its echo arrived.
                    let id = Self.pick(model, step)
                    let sequence = UInt64(max(0, Int(model.sequence) + step.b - 2))
                    reported = real.accept(writeID: id, sequence: sequence)
                    model.accept(id: id, sequence: sequence)
                case 5:
                    let id = Self.pick(model, step)
                    reported = real.reject(writeID: id)
                    model.pending.removeAll { $0.id == id }
                case 6:
                    // A snapshot: a resync on the same host, or a restarted host (new epoch).
                    let newEpoch = step.c == 0
                    let epoch = newEpoch ? model.epoch + 1 : model.epoch
                    let sequence = newEpoch ? UInt64(step.b) : model.sequence + UInt64(step.b)
                    // Every property (a host's snapshot holds them all), some of them new.
                    var values: [String: Value] = [:]
                    for (offset, property) in ReplicaModel.properties.enumerated() {
                        values[property] = (step.a >> offset) & 1 == 0 ? Self.value(step.b + offset, shape: step.c + offset) : .null
                    }
                    let versions = values.mapValues { _ in sequence }
                    reported = real.applySnapshot(epoch: epoch, sequence: sequence, values: values, versions: versions)
                    model.applySnapshot(epoch: epoch, sequence: sequence, values: values)
                case 7:
                    let unsent = real.takeUnsent().map(\.id)
                    #expect(unsent == model.takeUnsent(), "step \(index) of \(steps)")
                    reported = []
                default:
                    real.markAllUnsent()
                    model.markAllUnsent()
                    reported = []
                }

                let shown = model.visible
                let followed = real.takeFollowed()
                for (name, edits) in followed.edits {
                    for edit in edits where follower[name]?.applyElementEdit(edit) != true { follower[name] = nil }
                }
                follower.merge(followed.values) { _, taken in taken }
                let changed = Set(ReplicaModel.properties.filter { shownBefore[$0] != shown[$0] })
                guard real.visible == shown, reported == changed, real.sequence == model.sequence,
                    real.pending.map(\.id) == model.pending.map(\.id),
                    real.inFlight == model.pending.filter({ $0.sent && $0.acceptedSequence == nil }).count,
                    real.queuedBytes == 10 * real.pending.count,
                    ReplicaModel.properties.allSatisfy({ real.visibleValue(of: $0) == shown[$0] }), follower == shown
                else {
                    Issue.record(
                        """
                        after step \(index) \(step) of \(steps):
                        shows \(real.visible), the model \(shown), the follower \(follower)
                        reported \(reported.sorted()), changed \(changed.sorted())
                        pending \(real.pending.map(\.id)), the model \(model.pending.map(\.id))
                        in flight \(real.inFlight), queued bytes \(real.queuedBytes)
                        """)
                    return
                }
            }
        }
    }

    /// One or two changes to the properties `a`, `b`, `c`: whole values, or one field of a
    /// struct (which fails quietly when the property does not hold a map, as in the engine).
    static func changes(_ step: Step) -> [PropertyChange] {
        let property = ReplicaModel.properties[step.a % 3]
        var changes: [PropertyChange]
        if step.c == 3 {
            changes = [PropertyChange(property, at: [.key(step.b % 2 == 0 ? "x" : "y")], to: .int(Int64(step.b)))]
        } else {
            changes = [PropertyChange(property, to: value(step.b, shape: step.c))]
        }
        if step.a >= 3 {
            // A multi-property write: both changes travel and apply as one.
            changes.append(PropertyChange(ReplicaModel.properties[(step.a + 1) % 3], to: value(step.b + 1, shape: step.c)))
        }
        return changes
    }

    /// A small int, or a struct with fields `x` and `y` so that path writes have a target.
    static func value(_ number: Int, shape: Int) -> Value {
        shape % 2 == 0 ? .int(Int64(number % 4)) : .map(["x": .int(Int64(number % 3)), "y": .int(0)])
    }

    /// A pending write's id, or now and then one the state does not know.
    static func pick(_ model: ReplicaModel, _ step: Step) -> UInt64 {
        guard !model.pending.isEmpty, step.c != 3 else { return UInt64(step.a) + 1_000 }
        return model.pending[step.a % model.pending.count].id
    }
}

/// The reference: no overlay, no shortcuts; every answer is computed from the lists.
struct ReplicaModel {
    struct Write {
        let id: UInt64
        let changes: [PropertyChange]
        var sent = false
        var acceptedSequence: UInt64?
    }

    static let properties = ["a", "b", "c"]

    var confirmed: [String: Value] = [:]
    var pending: [Write] = []
    var sequence: UInt64 = 0
    var epoch: UInt64 = 0

    var visible: [String: Value] {
        var shown = confirmed
        for write in pending {
            for change in write.changes { Self.apply(change, to: &shown) }
        }
        return shown
    }

    /// A whole value replaces; a path write changes a field of the value there, if it can.
    static func apply(_ change: PropertyChange, to values: inout [String: Value]) {
        if change.path.components.isEmpty {
            values[change.property] = change.value
        } else if let current = values[change.property], let updated = try? current.setting(change.value, at: change.path) {
            values[change.property] = updated
        }
    }

    mutating func applyBatch(sequence: UInt64, changes: [PropertyChange], echoOf id: UInt64?) {
        for change in changes { Self.apply(change, to: &confirmed) }
        self.sequence = sequence
        pending.removeAll { $0.id == id || ($0.acceptedSequence.map { $0 <= sequence } ?? false) }
    }

    mutating func accept(id: UInt64, sequence: UInt64) {
        guard let index = pending.firstIndex(where: { $0.id == id }) else { return }
        if sequence <= self.sequence {
            pending.remove(at: index)
        } else {
            pending[index].acceptedSequence = sequence
        }
    }

    mutating func applySnapshot(epoch: UInt64, sequence: UInt64, values: [String: Value]) {
        if epoch != self.epoch {
            // Accepted writes died with the old host; the others are sent to the new one.
            pending.removeAll { $0.acceptedSequence != nil }
            for index in pending.indices { pending[index].sent = false }
        }
        self.epoch = epoch
        self.sequence = sequence
        confirmed = values
        pending.removeAll { $0.acceptedSequence.map { $0 <= sequence } ?? false }
    }

    mutating func takeUnsent() -> [UInt64] {
        let ids = pending.filter { !$0.sent }.map(\.id)
        for index in pending.indices { pending[index].sent = true }
        return ids
    }

    mutating func markAllUnsent() {
        for index in pending.indices where pending[index].acceptedSequence == nil { pending[index].sent = false }
    }
}
