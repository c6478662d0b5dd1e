import Dispatch
import Foundation
import StateBusRuntime
import StateBusWire
import Synchronization
import Testing

@testable import StateBus

/// `CommitPipeline`'s rules, one example each, with a real `HostPersistence` on a SQLite file
/// in a temporary folder and the test playing the host's loop (`take`, then `advance`, as
/// `publishPending` calls them). The commit thread is held back where a rule is about what
/// happens while a transaction runs, so each outcome is certain.
@Suite("CommitPipeline: what waits for a transaction, and what goes out when")
struct CommitPipelineTests {
    @Test("a batch that changes no persisted property goes out at once, with its answer")
    func plainBatches() throws {
        let bench = try PipelineBench()
        defer { bench.close() }
        let count = try bench.viewWrite("count", 1, in: "Counter", writeID: 1)
        let draft = try bench.viewWrite("draft", "x", writeID: 2)
        let now = bench.pipeline.take(replies: [count, draft])
        #expect(PipelineBench.keys(now.batches) == ["Counter/1", "Settings/1"])
        #expect(now.replies.map(\.writeID) == [1, 2])
        #expect(now.failure == nil && now.undurableBatches.isEmpty)
        #expect(bench.pipeline.isIdle)
        #expect(bench.pipeline.advance().isEmpty)
        #expect(bench.commits == 0)

        // Without persistence nothing waits, not even a property marked persisted.
        let plain = try PipelineBench(persisted: false)
        defer { plain.close() }
        let theme = try plain.viewWrite("theme", "dark", writeID: 1)
        #expect(!theme.durable)
        #expect(PipelineBench.keys(plain.pipeline.take(replies: [theme]).batches) == ["Settings/1"])
        #expect(plain.pipeline.isIdle)
    }

    @Test("a durable batch waits for its transaction; later batches of its object wait behind it, other objects' go on")
    func durableBatchWaits() throws {
        let bench = try PipelineBench()
        defer { bench.close() }
        bench.holdCommits()
        let theme = try bench.viewWrite("theme", "dark", writeID: 1)
        #expect(theme.durable)
        var now = bench.pipeline.take(replies: [theme])
        #expect(now.batches.isEmpty && now.replies.isEmpty)
        #expect(bench.pipeline.isAwaiting(.init(view: "v", writeID: 1)))
        #expect(bench.pipeline.advance().isEmpty, "the transaction runs")

        let draft = try bench.viewWrite("draft", "x", writeID: 2)
        let count = try bench.viewWrite("count", 1, in: "Counter", writeID: 3)
        now = bench.pipeline.take(replies: [draft, count])
        #expect(PipelineBench.keys(now.batches) == ["Counter/1"])
        #expect(now.replies.map(\.writeID) == [3])
        #expect(bench.pipeline.advance().isEmpty, "still running")
        #expect(!bench.pipeline.isIdle)
        #expect(bench.wakes == 0)

        let released = bench.finishCommits()
        #expect(bench.wakes == 1, "the commit thread wakes the loop once per transaction")
        // The durable group, then the batch behind it (nothing to store: released at once).
        #expect(released.map { PipelineBench.keys($0.batches) } == [["Settings/1"], ["Settings/2"]])
        #expect(released.map { $0.replies.map(\.writeID) } == [[1], [2]])
        #expect(released.allSatisfy { $0.failure == nil && $0.undurableBatches.isEmpty })
        #expect(bench.pipeline.isIdle && !bench.pipeline.isAwaiting(.init(view: "v", writeID: 1)))
        #expect(bench.commits == 1)
        // The file holds the value and the durable write's answer, not the other writes'.
        let stored = try bench.stored()
        #expect(stored.properties.map { "\($0.property)=\($0.value)" } == ["theme=\(Value.string("dark"))"])
        #expect(stored.answers == [StoredAnswer(view: "v", writeID: 1, digest: 1, object: "Settings")])

        // Nothing of Settings waits any more: its next plain batch goes at once.
        let next = try bench.viewWrite("draft", "y", writeID: 4)
        #expect(PipelineBench.keys(bench.pipeline.take(replies: [next]).batches) == ["Settings/3"])
    }

    @Test("what queues up behind a running transaction forms one group: one transaction, released in order")
    func groupCommit() throws {
        let bench = try PipelineBench()
        defer { bench.close() }
        bench.holdCommits()
        _ = bench.pipeline.take(replies: [try bench.viewWrite("theme", "a", writeID: 1)])
        #expect(bench.pipeline.advance().isEmpty)
        // Four turns while the disk is busy.
        _ = bench.pipeline.take(replies: [try bench.viewWrite("theme", "b", writeID: 2)])
        _ = bench.pipeline.take(replies: [try bench.viewWrite("notifications", false, writeID: 3)])
        _ = bench.pipeline.take(replies: [try bench.viewWrite("draft", "z", writeID: 4)])
        _ = bench.pipeline.take(replies: [try bench.viewWrite("theme", "c", writeID: 5)])
        #expect(bench.pipeline.advance().isEmpty)

        // Held again before the collection starts the next group's transaction, so that one
        // is certain not to have committed when the count is read.
        var released = bench.finishCommits(holdingTheNext: true)
        #expect(released.map { PipelineBench.keys($0.batches) } == [["Settings/1"]], "the next group's transaction starts")
        #expect(bench.commits == 1)
        released = bench.finishCommits()
        #expect(released.map { PipelineBench.keys($0.batches) } == [["Settings/2", "Settings/3", "Settings/4", "Settings/5"]])
        #expect(released.first?.replies.map(\.writeID) == [2, 3, 4, 5])
        #expect(bench.commits == 2 && bench.wakes == 2)
        #expect(bench.pipeline.isIdle)
        let stored = try bench.stored()
        #expect(Set(stored.properties.map { "\($0.property)=\($0.value)" }) == ["theme=\(Value.string("c"))", "notifications=\(Value.bool(false))"])
        #expect(Set(stored.answers.map(\.writeID)) == [1, 2, 3, 5])
    }

    @Test("a durable write of the value the file holds still waits for a transaction: its answer is stored")
    func answerOnly() throws {
        let bench = try PipelineBench()
        defer { bench.close() }
        _ = bench.pipeline.take(replies: [try bench.viewWrite("theme", "dark", writeID: 1)])
        _ = bench.pipeline.advance()
        _ = bench.finishCommits()
        // The host's own change back to the stored value has nothing to store: no transaction.
        try bench.hostChange("theme", "dark", waiter: 1, log: WaiterLog())
        _ = bench.pipeline.take(replies: [])
        #expect(bench.pipeline.advance().map { PipelineBench.keys($0.batches) } == [["Settings/2"]])
        #expect(bench.commits == 1)
        // A view's write of it has its answer to store, so the next host honours a copy.
        bench.holdCommits()
        let again = try bench.viewWrite("theme", "dark", writeID: 2)
        #expect(bench.pipeline.take(replies: [again]).replies.isEmpty)
        #expect(bench.pipeline.advance().isEmpty)
        #expect(bench.finishCommits().map { $0.replies.map(\.writeID) } == [[2]])
        #expect(bench.commits == 2)
        #expect(try Set(bench.stored().answers.map(\.writeID)) == [1, 2])
    }

    @Test("a copy's answer goes out after its first copy's, wherever that waits")
    func copies() throws {
        let bench = try PipelineBench()
        defer { bench.close() }
        bench.holdCommits()
        let first = try bench.viewWrite("theme", "dark", writeID: 1)
        _ = bench.pipeline.take(replies: [first])
        #expect(bench.pipeline.advance().isEmpty)
        // A copy of the write whose commit runs waits; one of a write answered before does not.
        var answeredBefore = PipelineBench.copy(of: first)
        answeredBefore.writeID = 2
        let now = bench.pipeline.take(replies: [PipelineBench.copy(of: first), answeredBefore])
        #expect(now.replies.map { "\($0.writeID) \($0.isCopy)" } == ["2 true"])
        let released = bench.finishCommits()
        #expect(released.flatMap(\.replies).map { "\($0.writeID) \($0.isCopy)" } == ["1 false", "1 true"])
        // Answered: a later copy goes at once.
        #expect(bench.pipeline.take(replies: [PipelineBench.copy(of: first)]).replies.count == 1)
        // The original and its copy in one turn: the copy follows it into the group.
        bench.holdCommits()
        let together = try bench.viewWrite("theme", "light", writeID: 3)
        #expect(bench.pipeline.take(replies: [together, PipelineBench.copy(of: together)]).replies.isEmpty)
        #expect(bench.pipeline.advance().isEmpty)
        #expect(bench.finishCommits().flatMap(\.replies).map { "\($0.writeID) \($0.isCopy)" } == ["3 false", "3 true"])
    }

    @Test("the host's own changes: their waiters go with their batches, durable only when the batch was stored")
    func waiters() throws {
        let bench = try PipelineBench()
        defer { bench.close() }
        bench.holdCommits()
        let log = WaiterLog()
        try bench.hostChange("theme", "dark", waiter: 1, log: log)
        try bench.hostChange("draft", "x", waiter: 2, log: log)
        try bench.hostChange("count", 5, in: "Counter", waiter: 3, log: log)
        let now = bench.pipeline.take(replies: [])
        #expect(PipelineBench.keys(now.batches) == ["Counter/1"])
        #expect(log.identify(now.waiters) == ["3"])
        #expect(bench.pipeline.advance().isEmpty)
        let released = bench.finishCommits()
        #expect(released.map { PipelineBench.keys($0.batches) } == [["Settings/1", "Settings/2"]])
        #expect(log.identify(released.flatMap(\.waiters)) == ["1 durable", "2"])
    }

    @Test("a failed commit releases its group with the failure; values go back to the file's, and the next commit tries again")
    func failedCommit() throws {
        let bench = try PipelineBench()
        defer { bench.close() }
        bench.holdCommits()
        _ = bench.pipeline.take(replies: [try bench.viewWrite("theme", "dark", writeID: 1), try bench.viewWrite("notifications", false, writeID: 2)])
        _ = bench.pipeline.advance()
        #expect(bench.finishCommits().first?.failure == nil)
        try bench.persistence?.writer.forbidGrowthForTesting()
        bench.holdCommits()

        // Too large for the file's pages: the transaction fails as on a full disk.
        let large = Value.string(String(repeating: "x", count: 64_000))
        let log = WaiterLog()
        let big = try bench.viewWrite("theme", large, writeID: 3)
        try bench.hostChange("notifications", true, waiter: 1, log: log)
        let behind = try bench.viewWrite("draft", "after", writeID: 4)
        #expect(bench.pipeline.take(replies: [big, behind]).batches.isEmpty)
        #expect(bench.pipeline.advance().isEmpty)
        let released = bench.finishCommits()
        #expect(released.count == 1)
        let failed = try #require(released.first)
        #expect(failed.failure?.kind == .diskFull)
        #expect(failed.failure?.path == bench.path)
        #expect(PipelineBench.keys(failed.batches) == ["Settings/3", "Settings/4", "Settings/5"])
        // Published without their origin: the durable ones only.
        #expect(Set(PipelineBench.keys(failed.undurableBatches.map { ($0.object, $0.sequence) })) == ["Settings/3", "Settings/4"])
        #expect(failed.replies.map(\.writeID) == [3, 4])
        #expect(log.identify(failed.waiters) == ["1 durable"])
        #expect(bench.log.messages.contains { $0.level == .error && $0.message.contains("set back to their stored values") })

        // Compensation set the persisted properties back to what the file holds, in batches of
        // the host's own, which need no transaction: released at the next turn.
        #expect(bench.value("theme") == "dark" && bench.value("notifications") == false)
        #expect(bench.value("draft") == "after")
        #expect(bench.pipeline.take(replies: []).batches.isEmpty)
        let compensation = bench.pipeline.advance()
        #expect(compensation.flatMap { PipelineBench.keys($0.batches) } == ["Settings/6", "Settings/7"])
        #expect(compensation.flatMap(\.batches).allSatisfy { $0.origin == nil && $0.writeID == 0 })
        #expect(bench.commits == 1 && bench.pipeline.isIdle)

        // A write that fits is stored: the disk is tried again.
        bench.holdCommits()
        _ = bench.pipeline.take(replies: [try bench.viewWrite("theme", "light", writeID: 5)])
        _ = bench.pipeline.advance()
        #expect(bench.finishCommits().map(\.failure) == [nil])
        #expect(try bench.stored().properties.contains { $0.property == "theme" && $0.value == "light" })
    }
}

/// A host's commit path without its loop: a source of truth serving a persisted object and a
/// plain one, its `HostPersistence` on a file in a temporary folder, and a `CommitPipeline`.
/// The test plays the loop; `holdCommits()` holds the commit thread back as a slow disk would.
final class PipelineBench {
    static let objects = [
        ObjectDefinition(
            "Settings",
            properties: [
                PropertyDefinition("theme", default: "light", persisted: true),
                PropertyDefinition("notifications", default: true, persisted: true),
                PropertyDefinition("draft", default: "")
            ]),
        ObjectDefinition("Counter", properties: [PropertyDefinition("count", default: 0)])
    ]

    let folder = Fixtures.temporaryFolder()
    var path: String { "\(folder)/state.sqlite" }
    let log = CapturedLog()
    let truth = SourceOfTruth(epoch: 1, objects: PipelineBench.objects)
    let persistence: HostPersistence?
    let pipeline: CommitPipeline
    private let wakeCount = Tally()
    private var gate: CommitGate?

    init(persisted: Bool = true) throws {
        persistence = try HostPersistence.open(
            persisted ? .file("\(folder)/state.sqlite") : .disabled, store: nil, hostName: "test", lockTimeout: .seconds(2), logger: log.logger,
            objects: Self.objects, state: truth)
        pipeline = CommitPipeline(truth: truth, persistence: persistence) { [wakeCount] in wakeCount.add() }
    }

    /// Times the commit thread woke the loop.
    var wakes: Int { wakeCount.value }
    /// Transactions committed.
    var commits: Int { persistence?.writer.commitCount ?? 0 }

    /// A view's write, applied as the host's write path applies it.
    /// - Returns: its answer, for `take(replies:)`.
    func viewWrite(_ property: String, _ value: Value, in object: String = "Settings", writeID: UInt64) throws -> PendingReply {
        let (sequence, _) = try truth.apply([PropertyChange(property, to: value)], to: object, fromView: "v", writeID: writeID)
        let persisted = persistence?.firstPersisted(object, [property])
        return PendingReply(
            requester: Requester(identity: [1]), verdict: .success(sequence), object: object, sequence: sequence, durable: persisted != nil,
            persistedProperty: persisted ?? "", view: "v", writeID: writeID, digest: writeID, isCopy: false)
    }

    /// The answer to a copy of a write, as the ledger gives it.
    static func copy(of reply: PendingReply) -> PendingReply {
        var copy = reply
        copy.sequence = 0
        copy.isCopy = true
        return copy
    }

    /// A change of the host's own whose waiter hears when it is durable (`applyDurably`).
    /// - Returns: its batch's sequence.
    @discardableResult
    func hostChange(_ property: String, _ value: Value, in object: String = "Settings", waiter: Int, log: WaiterLog) throws -> UInt64 {
        try truth.apply([PropertyChange(property, to: value)], to: object, fromView: nil, writeID: 0, whenDurable: log.waiter(waiter)).sequence
    }

    func value(_ property: String, in object: String = "Settings") -> Value? {
        truth.withStore(object) { $0.value(of: property) } ?? nil
    }

    /// Holds the commit thread until the next `finishCommits()`: transactions asked for
    /// meanwhile wait behind it. Only while no transaction runs, so nothing finishes meanwhile.
    func holdCommits() {
        guard let writer = persistence?.writer else { return }
        gate = CommitGate(holding: writer)
    }

    /// Lets the commit thread go on with the transactions held back.
    func letCommitsGo() {
        gate?.open()
        gate = nil
    }

    /// Lets the commit thread go, waits for every transaction asked for, and has the
    /// pipeline collect them, as the loop does once woken.
    /// - Parameter holdingTheNext: holds the commit thread again before the collection,
    ///   so a transaction it starts (the next group's) waits until the next call.
    func finishCommits(holdingTheNext: Bool = false) -> [CommitPipeline.Release] {
        letCommitsGo()
        persistence?.writer.waitUntilIdle()
        if holdingTheNext { holdCommits() }
        return pipeline.advance()
    }

    /// What the file holds, read as a tool reads it.
    func stored() throws -> StoredContents {
        let store = try SQLitePropertyStore(path: path, readOnly: true)
        defer { store.close() }
        return try store.load()
    }

    func close() {
        gate?.open()
        persistence?.writer.close()
        try? FileManager.default.removeItem(atPath: folder)
    }

    static func keys(_ batches: [AppliedBatch]) -> [String] { keys(batches.map { ($0.object, $0.sequence) }) }
    static func keys(_ batches: [(String, UInt64)]) -> [String] { batches.map { "\($0.0)/\($0.1)" } }
}

/// A count any thread may add to.
final class Tally: Sendable {
    private let count = Atomic<Int>(0)

    var value: Int { count.load(ordering: .relaxed) }

    func add() { count.add(1, ordering: .relaxed) }
}

/// Holds the commit thread (a transaction that waits) until opened.
final class CommitGate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let opened = Locked(false)

    init(holding writer: DurableWriter) {
        writer.commit([], answers: []) { [semaphore] _ in semaphore.wait() }
    }

    func open() {
        let first = opened.withLock { opened in
            defer { opened = true }
            return !opened
        }
        if first { semaphore.signal() }
    }
}

/// Waiters of the host's own changes that say which they were when called.
final class WaiterLog: Sendable {
    private let calls = Locked<[Int]>([])

    func waiter(_ id: Int) -> SourceOfTruth.DurabilityWaiter {
        { [self] _ in calls.withLock { $0.append(id) } }
    }

    /// Calls each waiter of a release. - Returns: which they were, "durable" where so marked.
    func identify(_ waiters: [(waiter: SourceOfTruth.DurabilityWaiter, durable: Bool)]) -> [String] {
        waiters.map { entry in
            entry.waiter(nil)
            let id = calls.withLock { $0.last ?? -1 }
            return entry.durable ? "\(id) durable" : "\(id)"
        }
    }
}
