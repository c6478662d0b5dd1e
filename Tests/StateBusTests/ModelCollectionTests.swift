import Foundation
import IdentifiedCollections
import PropertyBased
import StateBusWire
import Synchronization
import Testing

@testable import StateBus

/// How many `CountedChore`s were decoded in this process: a model that decodes a whole
/// collection for a one-element change decodes every element.
let choreDecodes = Atomic<Int>(0)

/// How many `CountedChore`s were encoded in this process: a model that encodes a whole
/// collection for its own one-element edit encodes every element.
let choreEncodes = Atomic<Int>(0)

/// An element that counts its decodes and encodes.
struct CountedChore: Codable, Identifiable, Equatable, Sendable {
    var id: Int
    var title: String
    var done = false

    private enum CodingKeys: String, CodingKey {
        case id, title, done
    }

    init(id: Int, title: String, done: Bool = false) {
        self.id = id
        self.title = title
        self.done = done
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        title = try container.decode(String.self, forKey: .title)
        done = try container.decode(Bool.self, forKey: .done)
        choreDecodes.add(1, ordering: .relaxed)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(done, forKey: .done)
        choreEncodes.add(1, ordering: .relaxed)
    }
}

/// The same element for a host that must not count.
struct UncountedChore: Codable, Identifiable, Equatable, Sendable {
    var id: Int
    var title: String
    var done = false
}

/// A keyed collection (`IdentifiedArray`) and a plain array of identified elements, both of
/// which travel as keyed collections.
@MainActor @SharedModel
final class ChoreBoard {
    var chores: IdentifiedArrayOf<CountedChore> = []
    var plain: [CountedChore] = []
    var note: String = ""
    @Local var commits: [Set<String>] = []
    /// The ids of the chores done, as the post-commit hook saw them at each call.
    @Local var doneAtCommits: [[Int]] = []

    func didCommit(_ properties: Set<String>) {
        commits.append(properties)
        doneAtCommits.append(chores.filter(\.done).map(\.id))
    }
}

/// Waits without yielding the main actor, so that no model's bus takes what changed in the
/// meantime, until `condition` holds or the deadline passes.
@MainActor
private func holdingTheMainActor(until what: String, timeout: Duration = .seconds(20), _ condition: () -> Bool) throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { throw StateBusError(.timeout, "timed out waiting for \(what)") }
        // The CPU goes to whoever the kernel queued, such as the host and replica threads
        // this waits for: a hot spin takes one of two cores from them, and keeps the main
        // actor (where other tests' models run their actions) held the longer.
        sched_yield()
    }
}

@MainActor
@Suite("A view's model of a large collection: one element changed, one element decoded", .serialized)
struct ModelCollectionTests {
    private func serve(_ model: ChoreBoard) async throws -> StateHost {
        let folder = Fixtures.temporaryFolder()
        return try await StateHost(
            serving: [model],
            configuration: HostConfiguration(
                name: "chores", controlEndpoint: "ipc://\(folder)/control", heartbeatInterval: .milliseconds(200), persistence: .disabled))
    }

    /// A host of ChoreBoard declared with an element type that does not count, so that every
    /// element counted is a view's: 2,000 chores, and as many in `plain` when `plainToo`.
    private static func uncountedHost(plainToo: Bool) async throws -> StateHost {
        let folder = Fixtures.temporaryFolder()
        let uncounted = (0..<2_000).map { UncountedChore(id: $0, title: "chore \($0)") }
        return try await StateHost(
            objects: [
                ObjectDefinition(
                    "ChoreBoard",
                    properties: [
                        PropertyDefinition("chores", default: IdentifiedArray(uniqueElements: uncounted), writable: true),
                        PropertyDefinition("plain", default: plainToo ? uncounted : [], writable: true),
                        PropertyDefinition("note", default: "", writable: true)
                    ])
            ],
            configuration: HostConfiguration(name: "chores", controlEndpoint: "ipc://\(folder)/control", persistence: .disabled))
    }

    /// A host serving a ChoreBoard of `count` chores, and a plain replica (no model) that
    /// writes to it, live.
    private func servedWithWriter(chores count: Int) async throws -> (truth: ChoreBoard, host: StateHost, writer: Replica) {
        let truth = ChoreBoard()
        truth.chores = IdentifiedArray(uniqueElements: Self.chores(count))
        let host = try await serve(truth)
        do {
            let writer = try Replica(object: "ChoreBoard", controlEndpoint: host.controlEndpoint)
            do {
                try await writer.waitUntilLive()
            } catch {
                writer.close()
                throw error
            }
            return (truth, host, writer)
        } catch {
            host.stop()
            throw error
        }
    }

    private static func chores(_ count: Int) -> [CountedChore] {
        (0..<count).map { CountedChore(id: $0, title: "chore \($0)") }
    }

    @Test("a one-element change of a 2,000-item collection decodes one element at the view, not 2,000")
    func oneElementDecoded() async throws {
        // The host declares the object with an element type that does not count, so every
        // decode counted is the view's.
        let host = try await Self.uncountedHost(plainToo: true)
        defer { host.stop() }
        // A view that a slow machine does not make rejoin: a new snapshot is taken whole,
        // rightly, and under ThreadSanitizer's slowness one came (4,000 decodes) when the view
        // missed three of the host's heartbeats. Patient, it counts the publication's path.
        let replica = try Replica(
            object: "ChoreBoard", controlEndpoint: host.controlEndpoint,
            configuration: ReplicaConfiguration(missedHeartbeatsBeforeStale: 1_000, requestTimeout: .seconds(120)))
        try await replica.waitUntilLive(timeout: .seconds(60))
        let view = ChoreBoard()
        view._$bus.attach(view, to: replica)
        defer { view.connection.detach() }
        #expect(view.chores.count == 2_000 && view.plain.count == 2_000)

        let before = choreDecodes.load(ordering: .relaxed)
        _ = try host.apply([PropertyChange("chores", .replace, at: [.id(.int(700)), "title"], element: "changed on the host")], to: "ChoreBoard")
        _ = try host.apply(
            [PropertyChange("plain", .insert, element: .map(["id": .int(5_000), "title": "appended", "done": .bool(false)]), position: 2_000)],
            to: "ChoreBoard")
        _ = try host.apply([PropertyChange("plain", .remove, at: [.id(.int(3))])], to: "ChoreBoard")
        try await waitUntil("the view shows the three changes") {
            view.chores[id: 700]?.title == "changed on the host" && view.plain.last?.title == "appended" && view.plain[3].id == 4
        }
        // Before the view repeated edits, it decoded both whole collections: 4,000 elements.
        let decoded = choreDecodes.load(ordering: .relaxed) - before
        #expect(replica.statistics.appliedSnapshots == 1, "the view joined again: \(replica.statistics)")
        #expect(decoded == 2, "decoded \(decoded) elements for three one-element changes")
        let hostValues = try #require(host.values(of: "ChoreBoard"))
        #expect(try ValueEncoder().encode(view.chores) == hostValues["chores"])
        #expect(try ValueEncoder().encode(view.plain) == hostValues["plain"])

        // A whole new value still reaches the model whole.
        _ = try host.apply([PropertyChange("chores", to: try ValueEncoder().encode([UncountedChore(id: 1, title: "only")]))], to: "ChoreBoard")
        try await waitUntil("the view shows the new list") { view.chores.map(\.title) == ["only"] }
    }

    @Test("the host's model takes a view's one-element change of a 2,000-item collection by decoding one element")
    func hostModelDecodesOneElement() async throws {
        // A view that writes values, so that it decodes nothing itself.
        let (truth, host, writer) = try await servedWithWriter(chores: 2_000)
        defer {
            writer.close()
            host.stop()
        }

        let before = choreDecodes.load(ordering: .relaxed)
        _ = try await writer.write([PropertyChange("chores", .replace, at: [.id(.int(700)), "done"], element: true)]).accepted()
        _ = try await writer.write([PropertyChange("chores", .remove, at: [.id(.int(3))])]).accepted()
        try await waitUntil("the host's model shows both changes") { truth.chores[id: 700]?.done == true && truth.chores[id: 3] == nil }
        // One decode where the host checks the changed element, one where its model takes
        // it; before, the model decoded the whole collection for each change.
        let decoded = choreDecodes.load(ordering: .relaxed) - before
        #expect(decoded == 2, "decoded \(decoded) elements for two one-element changes")
        #expect(try ValueEncoder().encode(truth.chores) == host.value(of: "chores", in: "ChoreBoard"))
        // The post-commit hook hears of changes repeated as edits too.
        #expect(truth.commits.contains(["chores"]), "\(truth.commits)")

        // The host's own edit reaches the view and stays in the host's model as made.
        truth.chores[id: 701]?.title = "changed on the host"
        let edited = try ValueEncoder().encode(truth.chores)
        try await writer.waitFor(timeout: .seconds(20), "the host's edit") { $0["chores"] == edited }
        #expect(truth.chores[id: 701]?.title == "changed on the host" && truth.chores.count == 1_999)
    }

    @Test("the host's post-commit hook hears once of a view's element edit and a later whole write taken together, and sees both")
    func oneCommitPerPull() async throws {
        let (truth, host, writer) = try await servedWithWriter(chores: 10)
        defer {
            writer.close()
            host.stop()
        }
        truth.commits.removeAll()
        truth.doneAtCommits.removeAll()

        // Both applied by the host before its model's bus, on the main actor held here, takes
        // either: the edit is journaled as an edit, the note as a whole value.
        let edit = writer.write([PropertyChange("chores", .replace, at: [.id(.int(7)), "done"], element: true)])
        let note = writer.write([PropertyChange("note", to: "written after the edit")])
        try holdingTheMainActor(until: "the host to apply both writes") {
            host.value(of: "note", in: "ChoreBoard") == .string("written after the edit")
        }
        _ = try await edit.accepted()
        _ = try await note.accepted()
        try await waitUntil("the host's model to take both") { truth.note == "written after the edit" && truth.chores[id: 7]?.done == true }
        #expect(truth.commits == [["chores", "note"]])
        // Before, the hook heard of the note first, with the edit not yet in the model.
        #expect(truth.doneAtCommits == [[7]])
    }

    @Test("a view's own edit of one element of a 2,000-item collection encodes that element, and a sibling field edited elsewhere survives")
    func ownElementEdit() async throws {
        let host = try await Self.uncountedHost(plainToo: false)
        defer { host.stop() }
        let view = try await ChoreBoard.replica(controlEndpoint: host.controlEndpoint)
        let other = try await ChoreBoard.replica(controlEndpoint: host.controlEndpoint)
        defer {
            view.connection.detach()
            other.connection.detach()
        }

        let before = choreEncodes.load(ordering: .relaxed)
        view.chores[id: 7]?.title = "renamed here"
        // The element before and after; before, the whole collection was encoded (2,000).
        let encoded = choreEncodes.load(ordering: .relaxed) - before
        #expect(encoded == 2, "encoded \(encoded) elements for one edit")
        // Made before the other view heard of the rename: only the field it changed travels.
        other.chores[id: 7]?.done = true
        try await waitUntil("both views to hold both edits") {
            [view, other].allSatisfy { $0.chores[id: 7]?.title == "renamed here" && $0.chores[id: 7]?.done == true }
        }
        let expected = try ValueEncoder().encode(view.chores)
        try await waitUntil("the host to hold both edits") { host.value(of: "chores", in: "ChoreBoard") == expected }
    }

    @Test("random element changes from the host, another view and the view itself leave the view's model equal to the host's")
    func randomChangesConverge() async throws {
        var random = Xoshiro(seed: (2026, 0x9E37_79B9_7F4A_7C15, 11, 1))
        let truth = ChoreBoard()
        truth.chores = IdentifiedArray(uniqueElements: Self.chores(40))
        truth.plain = Self.chores(40)
        let host = try await serve(truth)
        defer { host.stop() }
        let view = try await ChoreBoard.replica(controlEndpoint: host.controlEndpoint)
        let other = try await ChoreBoard.replica(controlEndpoint: host.controlEndpoint)
        defer {
            view.connection.detach()
            other.connection.detach()
        }
        // What every model must hold after each step: the steps are made one at a time, on
        // whichever model, so each applies to the list all of them hold.
        var expected = truth.chores
        var expectedPlain = truth.plain
        var nextID = 1_000
        for step in 0..<150 {
            // Who changes it: the host's model, another view's, or this view's own.
            let editor = [truth, other, view][Int.random(in: 0..<3, using: &random)]
            let count = expected.count
            switch Int.random(in: 0..<6, using: &random) {
            case 0 where count > 0:
                let index = Int.random(in: 0..<count, using: &random)
                expected[index].title = "edit \(step)"
                editor.chores[index].title = "edit \(step)"
            case 1 where count > 0:
                let index = Int.random(in: 0..<count, using: &random)
                expected[index].done.toggle()
                editor.chores[index].done.toggle()
            case 2:
                nextID += 1
                let position = Int.random(in: 0...count, using: &random)
                expected.insert(CountedChore(id: nextID, title: "new \(step)"), at: position)
                editor.chores.insert(CountedChore(id: nextID, title: "new \(step)"), at: position)
            case 3 where count > 1:
                let index = Int.random(in: 0..<count, using: &random)
                expected.remove(at: index)
                editor.chores.remove(at: index)
            case 4 where count > 1:
                let from = Int.random(in: 0..<count, using: &random)
                let to = Int.random(in: 0...count, using: &random)
                expected.move(fromOffsets: [from], toOffset: to)
                editor.chores.move(fromOffsets: [from], toOffset: to)
            default:
                if !expectedPlain.isEmpty, Bool.random(using: &random) {
                    let index = Int.random(in: 0..<expectedPlain.count, using: &random)
                    expectedPlain[index].title = "plain \(step)"
                    editor.plain[index].title = "plain \(step)"
                } else {
                    nextID += 1
                    expectedPlain.append(CountedChore(id: nextID, title: "plain new \(step)"))
                    editor.plain.append(CountedChore(id: nextID, title: "plain new \(step)"))
                }
            }
            try await waitUntil("step \(step): every model holding the step's result") {
                [truth, view, other].allSatisfy { $0.chores == expected && $0.plain == expectedPlain }
            }
        }
        #expect(host.values(of: "ChoreBoard")?["chores"] == (try ValueEncoder().encode(view.chores)))
    }

    @Test("a view's model that removes an element another view removed first, before it heard, ends with the host's list")
    func sameRemovalOnAView() async throws {
        let truth = ChoreBoard()
        truth.chores = IdentifiedArray(uniqueElements: Self.chores(10))
        let host = try await serve(truth)
        defer { host.stop() }
        let replica = try Replica(object: "ChoreBoard", controlEndpoint: host.controlEndpoint)
        try await replica.waitUntilLive()
        let view = ChoreBoard()
        view._$bus.attach(view, to: replica)
        defer { view.connection.detach() }

        // Removed at the host; the view's replica has it, its model not yet.
        let sequence = try host.apply([PropertyChange("chores", .remove, at: [.id(.int(5))])], to: "ChoreBoard")
        try holdingTheMainActor(until: "the view's replica to apply the removal") { replica.sequence >= sequence }
        #expect(view.chores[id: 5] != nil)
        view.chores.remove(id: 5)
        // The host refuses the second removal; no other element may go with it.
        try await replica.waitFor(timeout: .seconds(20), "the refusal") { $0.pendingWriteCount == 0 }
        let expected = (0..<10).filter { $0 != 5 }
        try await waitUntil("the view's model to hold the host's list") { view.chores.map(\.id) == expected }
    }

    @Test("the host's model that removes an element a view removed first, before it heard, ends with the host's list")
    func sameRemovalOnTheHost() async throws {
        let (truth, host, writer) = try await servedWithWriter(chores: 10)
        defer {
            writer.close()
            host.stop()
        }

        // A view's removal, applied by the host; the host's model has not taken it yet.
        let receipt = writer.write([PropertyChange("chores", .remove, at: [.id(.int(5))])])
        try holdingTheMainActor(until: "the host to apply the view's removal") {
            guard case .list(let items)? = host.value(of: "chores", in: "ChoreBoard") else { return false }
            return items.count == 9
        }
        #expect(truth.chores[id: 5] != nil)
        truth.chores.remove(id: 5)
        #expect(truth.connection.lastWriteError != nil)  // the host refused it: no such id any more
        _ = try await receipt.accepted()
        let expected = (0..<10).filter { $0 != 5 }
        _ = try host.apply([PropertyChange("note", to: "a later change")], to: "ChoreBoard")
        try await waitUntil("the host's model to take the later change") { truth.note == "a later change" }
        #expect(truth.chores.map(\.id) == expected)
    }

    @Test("a burst of element changes larger than the view's journal: the model takes the list whole once, and ends equal to the host")
    func burstBeyondTheJournal() async throws {
        let truth = ChoreBoard()
        truth.chores = IdentifiedArray(uniqueElements: Self.chores(100))
        let host = try await serve(truth)
        defer { host.stop() }
        let replica = try Replica(object: "ChoreBoard", controlEndpoint: host.controlEndpoint)
        try await replica.waitUntilLive()
        let view = ChoreBoard()
        view._$bus.attach(view, to: replica)
        defer { view.connection.detach() }
        // The replica applies more edits than its journal keeps before the model's bus, on
        // the main actor held here, can take any.
        let changes = ElementJournal.maxEdits + 500
        var sequence: UInt64 = 0
        for index in 0..<changes {
            sequence = try host.apply(
                [PropertyChange("chores", .replace, at: [.id(.int(Int64(index % 100))), "title"], element: .string("burst \(index)"))],
                to: "ChoreBoard")
        }
        try holdingTheMainActor(until: "the view's replica to apply the burst") { replica.sequence >= sequence }
        let before = choreDecodes.load(ordering: .relaxed)
        let hostChores = try #require(host.values(of: "ChoreBoard")?["chores"])
        try await waitUntil("the view after the burst") { (try? ValueEncoder().encode(view.chores)) == hostChores }
        #expect(view.chores[id: (changes - 1) % 100]?.title == "burst \(changes - 1)")
        // Taken whole (100 elements decoded, and the host's model's 100), not edit by edit
        // (one element decoded per change).
        let decoded = choreDecodes.load(ordering: .relaxed) - before
        #expect((100...300).contains(decoded), "decoded \(decoded) elements")
    }

    @Test("the journal keeps edits up to its bounds, then only that the property changed")
    func journalBounds() {
        var journal = ElementJournal()
        journal.record(.replaced(index: 0, element: "a"), of: "small")
        journal.record(.removed(index: 3), of: "small")
        for index in 0..<ElementJournal.maxEdits { journal.record(.removed(index: index), of: "many") }
        journal.record(.inserted(index: 0, element: .string(String(repeating: "x", count: ElementJournal.maxBytes))), of: "large")
        journal.replaced("note")
        journal.record(.removed(index: 0), of: "note")
        let taken = journal.take()
        #expect(taken.edits["small"] == [.replaced(index: 0, element: "a"), .removed(index: 3)])
        #expect(taken.edits["many"] == nil && taken.edits["large"] == nil && taken.edits["note"] == nil)
        #expect(taken.replaced == ["many", "large", "note"])
        let next = journal.take()
        #expect(next.edits.isEmpty && next.replaced.isEmpty)
    }
}
