import PropertyBased
import StateBusWire
import Testing

@testable import StateBus

/// `CommitPipeline` against a plain reference model, over random sequences of what the host's
/// loop does: views' writes and the host's own changes to persisted and plain properties of
/// two objects, copies of earlier writes, publications (`take`), the disk going slow and
/// coming back, and collections of finished transactions (`advance`). A real
/// `HostPersistence` stores on a SQLite file in a temporary folder.
///
/// What a host relies on: a batch goes out at once unless it changed a persisted property or
/// an earlier batch of its object waits; everything that waits forms the next group, one
/// transaction; groups are released whole and in order, each answer and waiter with its batch
/// and each copy's answer after its first copy's; every batch is released once, each object's
/// in sequence order; the file ends holding the durable values and answers, with one
/// transaction per group that had something to store.
@Suite("CommitPipeline against a reference model")
struct CommitPipelinePropertyTests {
    /// One event: `kind` picks what happens (``actions``), `target` which property, `value` what.
    struct Step: Sendable, CustomStringConvertible {
        let kind: Int
        let target: Int
        let value: Int

        var description: String { "(\(kind), \(target), \(value))" }
    }

    enum Action {
        case viewWrite, hostChange, copy, take, diskSlow, advance, diskBack
    }

    static let actions: [Action] = [
        .viewWrite, .viewWrite, .viewWrite, .hostChange, .hostChange, .copy, .take, .take, .diskSlow, .advance, .advance, .diskBack
    ]
    /// The properties written: two persisted ones and a plain one of `Settings`, and `Counter`'s.
    static let targets = [("Settings", "theme"), ("Settings", "notifications"), ("Settings", "draft"), ("Counter", "count")]

    static let steps = zip(Gen.int(in: 0..<actions.count), Gen.int(in: 0..<targets.count), Gen.int(in: 0...9))
        .map { Step(kind: $0, target: $1, value: $2) }
        .array(of: 1...40)

    /// A small set of values, so some writes set a property back to what the file holds.
    static func value(of property: String, _ number: Int) -> Value {
        switch property {
        case "theme": return .string(["light", "dark", "warm"][number % 3])
        case "notifications": return .bool(number % 2 == 0)
        case "draft": return .string("draft \(number)")
        default: return .int(Int64(number))
        }
    }

    @Test("batches wait, group and are released as the rules say; the file ends with the durable values")
    func randomEvents() async {
        await propertyCheck(count: 30, input: Self.steps) { steps in
            // Caught here: `propertyCheck` (swift-property-based 2.0.1) runs its body under
            // `try?`, so an error thrown out of it would pass the test unseen.
            do {
                try Self.check(steps)
            } catch {
                Issue.record(error, "after \(steps)")
            }
        }
    }

    /// Plays `steps` on a pipeline and on the model, comparing what each lets go.
    static func check(_ steps: [Step]) throws {
        let bench = try PipelineBench()
        defer { bench.close() }
        let log = WaiterLog()
        var model = PipelineModel()
        var turn: [PendingReply] = []
        var written: [PendingReply] = []
        var published: [String] = []
        var slow = false
        var nextWaiter = 1

        /// Compares what the pipeline let go with the model's; records the first difference.
        func matches(_ actual: [CommitPipeline.Release], _ expected: [PipelineModel.Release], _ context: String) -> Bool {
            let seen = actual.map { release in
                PipelineModel.Release(
                    batches: PipelineBench.keys(release.batches), replies: release.replies.map(PipelineModel.describe),
                    waiters: log.identify(release.waiters))
            }
            published += actual.flatMap { PipelineBench.keys($0.batches) }
            guard seen == expected, actual.allSatisfy({ $0.failure == nil && $0.undurableBatches.isEmpty }) else {
                Issue.record("\(context): released \(seen), the model \(expected)")
                return false
            }
            return true
        }

        for (index, step) in steps.enumerated() {
            let context = "step \(index) \(step) of \(steps)"
            let (object, property) = Self.targets[step.target]
            let value = Self.value(of: property, step.value)
            switch Self.actions[step.kind] {
            case .viewWrite:
                let reply = try bench.viewWrite(property, value, in: object, writeID: UInt64(written.count + 1))
                model.apply(object: object, property: property, value: value, sequence: reply.sequence, waiter: nil)
                turn.append(reply)
                written.append(reply)
            case .hostChange:
                let sequence = try bench.hostChange(property, value, in: object, waiter: nextWaiter, log: log)
                model.apply(object: object, property: property, value: value, sequence: sequence, waiter: nextWaiter)
                nextWaiter += 1
            case .copy:
                guard !written.isEmpty else { break }
                turn.append(PipelineBench.copy(of: written[step.value % written.count]))
            case .take:
                let now = bench.pipeline.take(replies: turn)
                guard matches([now], [model.take(replies: turn)], context) else { return }
                turn = []
            case .diskSlow:
                // Only while no transaction runs: one that runs could finish either way.
                guard !slow, model.running == nil else { break }
                bench.holdCommits()
                slow = true
            case .advance:
                // A transaction behind a slow disk has not finished; otherwise wait until it has.
                if !slow { bench.persistence?.writer.waitUntilIdle() }
                let released = bench.pipeline.advance()
                guard matches(released, model.advance(finished: !slow), context) else { return }
            case .diskBack:
                bench.letCommitsGo()
                slow = false
            }
            #expect(bench.pipeline.isIdle == model.isIdle, "\(context): whether idle")
            for reply in written {
                let key = CommitPipeline.WriteKey(view: reply.view, writeID: reply.writeID)
                #expect(bench.pipeline.isAwaiting(key) == model.isAwaiting(reply.writeID), "\(context): whether write \(reply.writeID) waits")
            }
        }

        // The loop publishes what is left and collects transactions until nothing waits.
        guard matches([bench.pipeline.take(replies: turn)], [model.take(replies: turn)], "the last take") else { return }
        for round in 0..<4 where !model.isIdle {
            guard matches(bench.finishCommits(), model.advance(finished: true), "the last commits, round \(round)") else { return }
        }
        #expect(bench.pipeline.isIdle && model.isIdle)

        // Every batch went out once, each object's in sequence order.
        for object in ["Settings", "Counter"] {
            let sequences = published.filter { $0.hasPrefix("\(object)/") }
            let expected = (0..<model.sequences[object, default: 0]).map { "\(object)/\($0 + 1)" }
            #expect(sequences == expected, "\(object)'s batches as released, after \(steps)")
        }
        // The file holds what the model says is durable, written in one transaction a group.
        let stored = try bench.stored()
        #expect(Dictionary(uniqueKeysWithValues: stored.properties.map { ($0.property, $0.value) }) == model.durable, "after \(steps)")
        #expect(Set(stored.answers.map(\.writeID)) == model.storedAnswers, "after \(steps)")
        #expect(bench.commits == model.transactions && bench.wakes == model.transactions, "after \(steps)")
    }
}

/// The reference pipeline: batches and answers by name, groups as plain lists.
struct PipelineModel {
    static let persisted: Set<String> = ["theme", "notifications"]

    struct Batch {
        var key: String
        var object: String
        var property: String
        var durable: Bool
        var waiter: Int?
    }

    struct Group {
        var batches: [Batch] = []
        var replies: [PendingReply] = []
        var waiters: [String] = []
        var touched: Set<String> = []
        var answers: Set<UInt64> = []
        var writes: Set<UInt64> = []

        var isEmpty: Bool { batches.isEmpty && replies.isEmpty && waiters.isEmpty && answers.isEmpty }
    }

    /// What goes out together, by name.
    struct Release: Equatable, CustomStringConvertible {
        var batches: [String] = []
        var replies: [String] = []
        var waiters: [String] = []

        var description: String { "[\(batches) \(replies) \(waiters)]" }
    }

    /// Current values and the file's, by property (the names differ across objects).
    var values: [String: Value] = [:]
    var durable: [String: Value] = [:]
    var storedAnswers: Set<UInt64> = []
    var sequences: [String: Int] = [:]
    var unpublished: [Batch] = []
    var held: [String: Int] = [:]
    var next = Group()
    var running: (group: Group, rows: [String: Value])?
    var transactions = 0

    var isIdle: Bool { running == nil && next.isEmpty }

    func isAwaiting(_ writeID: UInt64) -> Bool {
        next.writes.contains(writeID) || running?.group.writes.contains(writeID) == true
    }

    static func describe(_ reply: PendingReply) -> String { reply.isCopy ? "\(reply.writeID) copy" : "\(reply.writeID)" }

    mutating func apply(object: String, property: String, value: Value, sequence: UInt64, waiter: Int?) {
        sequences[object, default: 0] += 1
        values[property] = value
        unpublished.append(
            Batch(key: "\(object)/\(sequence)", object: object, property: property, durable: Self.persisted.contains(property), waiter: waiter))
    }

    /// A batch waits if it is durable or an earlier batch of its object waits; an answer or a
    /// waiter goes with its batch; a copy's answer waits while its first copy's does.
    mutating func take(replies: [PendingReply]) -> Release {
        var now = Release()
        var heldNow: Set<String> = []
        for batch in unpublished {
            guard batch.durable || held[batch.object, default: 0] > 0 else {
                now.batches.append(batch.key)
                continue
            }
            heldNow.insert(batch.key)
            held[batch.object, default: 0] += 1
            next.batches.append(batch)
            if batch.durable { next.touched.insert(batch.property) }
        }
        for reply in replies {
            if reply.isCopy ? isAwaiting(reply.writeID) : heldNow.contains("\(reply.object)/\(reply.sequence)") {
                next.replies.append(reply)
                guard !reply.isCopy else { continue }
                next.writes.insert(reply.writeID)
                if reply.durable { next.answers.insert(reply.writeID) }
            } else {
                now.replies.append(Self.describe(reply))
            }
        }
        for batch in unpublished {
            guard let waiter = batch.waiter else { continue }
            if heldNow.contains(batch.key) {
                next.waiters.append(batch.durable ? "\(waiter) durable" : "\(waiter)")
            } else {
                now.waiters.append("\(waiter)")
            }
        }
        unpublished = []
        return now
    }

    /// Releases the running group once its transaction `finished`, then starts the next: a
    /// group with no value that differs from the file's and no answer is released at once.
    mutating func advance(finished: Bool) -> [Release] {
        var released: [Release] = []
        if finished, let done = running {
            running = nil
            durable.merge(done.rows) { $1 }
            storedAnswers.formUnion(done.group.answers)
            released.append(release(done.group))
        }
        guard running == nil, !next.isEmpty else { return released }
        let group = next
        next = Group()
        var rows: [String: Value] = [:]
        for property in group.touched where values[property] != durable[property] { rows[property] = values[property] }
        if rows.isEmpty, group.answers.isEmpty {
            released.append(release(group))
        } else {
            running = (group, rows)
            transactions += 1
        }
        return released
    }

    private mutating func release(_ group: Group) -> Release {
        for batch in group.batches { held[batch.object]! -= 1 }
        return Release(batches: group.batches.map(\.key), replies: group.replies.map(Self.describe), waiters: group.waiters)
    }
}
