import Foundation
import IdentifiedCollections
import StateBus
import StateBusRuntime
import StateBusWire

/// Keyed collections: a host serving one `IdentifiedArray` property of `items` elements, and
/// a view that joins it and follows `updates` changes of one element each.
///
/// Host and view run in this process, each on its own I/O thread, over ipc:// (the figures
/// include both sides' work on the same cores). Three figures: the late join of the whole
/// collection; the bytes published per one-element change, beside the bytes of the whole
/// collection that a whole-value write would publish; and the changes per second the view
/// applies, from the first change made to the view holding the last.
struct CollectionBench {
    struct Item: Codable, Sendable, Identifiable, Equatable {
        var id: Int
        var label: String
        var value: Int
    }

    struct Outcome: Sendable {
        var joinNanoseconds: Double
        var bytesPerUpdate: Double
        var collectionBytes: Int
        var rate: Double
        /// What went wrong, when the view does not end with the host's collection.
        var problem: String?
    }

    let items: Int
    let updates: Int

    func run() async throws -> Outcome {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let collection = IdentifiedArrayOf<Item>(uniqueElements: (0..<items).map { Item(id: $0, label: "item \($0)", value: 0) })
        var configuration = HostConfiguration(name: "collection-bench", controlEndpoint: folder.endpoint("collection"))
        // Room for the whole collection as one property (about 6 MB at 100,000 items).
        configuration.limits = HostLimits(maxPropertyBytes: 256 << 20, maxObjectBytes: 256 << 20)
        let host = try await StateHost(
            objects: [ObjectDefinition("Collection", properties: [PropertyDefinition("items", default: collection)])], configuration: configuration)
        defer { host.stop() }
        let collectionBytes = try host.value(of: "items", in: "Collection")?.serializedBytes().count ?? 0

        let start = ContinuousClock.now
        let replica = try Replica(
            object: "Collection", controlEndpoint: host.controlEndpoint, configuration: ReplicaConfiguration(nodeName: "collection-view"))
        defer { replica.close() }
        try await replica.waitUntilLive(timeout: .seconds(300))
        let joined = start.duration(to: .now)

        let before = host.statistics.publicationBytes
        let first = host.sequence(of: "Collection") ?? 0
        let changing = ContinuousClock.now
        for update in 1...updates {
            let id = (update &* 7_919) % items
            _ = try host.apply([PropertyChange("items", at: [.id(.int(Int64(id))), "value"], to: .int(Int64(update)))], to: "Collection")
        }
        let last = first + UInt64(updates)
        try await replica.waitFor(timeout: .seconds(600), "the view to apply sequence \(last)") { $0.sequence >= last }
        let elapsed = changing.duration(to: .now)
        let published = host.statistics.publicationBytes - before
        let same = replica.values["items"] == host.value(of: "items", in: "Collection")
        return Outcome(
            joinNanoseconds: Self.nanoseconds(joined), bytesPerUpdate: Double(published) / Double(updates), collectionBytes: collectionBytes,
            rate: Double(updates) / (Self.nanoseconds(elapsed) / 1e9),
            problem: same ? nil : "the view's collection differs from the host's after \(updates) changes")
    }

    /// The same changes followed by a `@SharedModel` view (``CollectionModel``): how many
    /// one-element changes per second reach the model's `IdentifiedArray`, from the first
    /// change made to the model holding the last.
    /// Then `single` changes one at a time, each made once the model holds the one before:
    /// the time from a change to the model holding it, when nothing else is queued.
    /// Last, `ownEdits` edits made by the model itself: the median time in the setter.
    /// - Returns: the rate, the median time of a single change, the median time in the
    ///   setter, and what went wrong when the model does not end with the host's collection.
    @MainActor
    func runModel(single: Int = 200, ownEdits: Int = 50) async throws -> (
        rate: Double, singleNanoseconds: Double, setterNanoseconds: Double, problem: String?
    ) {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let collection = IdentifiedArrayOf<Item>(uniqueElements: (0..<items).map { Item(id: $0, label: "item \($0)", value: 0) })
        var configuration = HostConfiguration(name: "collection-model-bench", controlEndpoint: folder.endpoint("collection"))
        configuration.limits = HostLimits(maxPropertyBytes: 256 << 20, maxObjectBytes: 256 << 20)
        let host = try await StateHost(
            objects: [ObjectDefinition("Collection", properties: [PropertyDefinition("items", default: collection)])], configuration: configuration)
        defer { host.stop() }
        let model = try await CollectionModel.replica(
            controlEndpoint: host.controlEndpoint, configuration: ReplicaConfiguration(nodeName: "collection-model-view"), timeout: .seconds(300))
        defer { model.connection.detach() }

        let changing = ContinuousClock.now
        // Made off the main actor, so that the model follows while they come, as a view's
        // model follows a host in another process.
        let (items, updates) = (self.items, self.updates)
        let finalID = try await Task.detached {
            var lastID = 0
            for update in 1...updates {
                lastID = (update &* 7_919) % items
                _ = try host.apply([PropertyChange("items", at: [.id(.int(Int64(lastID))), "value"], to: .int(Int64(update)))], to: "Collection")
            }
            return lastID
        }.value
        try await model.waitUntil("the model to hold change \(updates)", timeout: .seconds(600)) { $0.items[id: finalID]?.value == updates }
        let elapsed = changing.duration(to: .now)

        // The view's own edits of one element each: the time its code spends in the setter,
        // which finds the change and hands it to the replica (on a UI's main thread).
        var setters: [Double] = []
        for edit in 1...ownEdits {
            let id = (edit &* 15_485_863) % items
            let started = ContinuousClock.now
            model.items[id: id]?.value = -edit
            setters.append(Self.nanoseconds(started.duration(to: .now)))
        }

        var singles: [Double] = []
        for change in 1...single {
            let id = (change &* 104_729) % items
            let value = updates + change
            let started = ContinuousClock.now
            _ = try host.apply([PropertyChange("items", at: [.id(.int(Int64(id))), "value"], to: .int(Int64(value)))], to: "Collection")
            try await model.waitUntil("the model to hold single change \(change)", timeout: .seconds(60)) { $0.items[id: id]?.value == value }
            singles.append(Self.nanoseconds(started.duration(to: .now)))
        }
        // The view's own edits went before the singles, so the host has them unless one was
        // lost; the check waits for the host's next change up to a deadline in any case.
        let expected = try ValueEncoder().encode(model.items)
        let same = await Self.host(host, reaches: expected, within: .seconds(30))
        return (
            Double(updates) / (Self.nanoseconds(elapsed) / 1e9), singles.sorted()[singles.count / 2], setters.sorted()[setters.count / 2],
            same ? nil : "the model's collection differs from the host's after \(updates + single) changes and \(ownEdits) edits of its own"
        )
    }

    /// Whether the host's collection becomes `expected` before the deadline: checked now and
    /// after each change of the object.
    private static func host(_ host: StateHost, reaches expected: Value, within timeout: Duration) async -> Bool {
        let changes = host.changes(of: "Collection")
        let met = try? await withDeadline(timeout) {
            if host.value(of: "items", in: "Collection") == expected { return true }
            for await _ in changes where host.value(of: "items", in: "Collection") == expected { return true }
            return false
        }
        // At the deadline (or when cancelled), the host's collection as it is then.
        return met ?? (host.value(of: "items", in: "Collection") == expected)
    }

    static func nanoseconds(_ duration: Duration) -> Double {
        duration.inNanoseconds
    }
}
