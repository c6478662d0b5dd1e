import Logging
import StateBusWire

/// The host's side of persisted properties: restores them at start, and works out what a
/// group commit must write and what to undo when it fails.
///
/// Lives on the host's I/O loop thread; the transactions themselves run on the commit
/// thread (``DurableWriter``), driven by the ``CommitPipeline``.
///
/// Only values that differ from the file are written: a property set back to its stored
/// value, or a compensation, costs no rows (a durable write still stores its answer).
///
/// Failure policy (roll back, keep serving): when a commit fails (a full disk, say), each
/// persisted property of the failed transaction that still holds the value we tried to
/// store is set back to its last durable value (the stored one, or the default when the
/// file has none) by a compensating host batch with compare-and-set, so a newer value set
/// meanwhile is never overwritten. The batches are published as they are (sequence numbers
/// stay contiguous, views converge on the durable state) and every waiting writer is
/// answered `persistenceFailed`. No write is acknowledged that is not durable. The next
/// write tries the disk again.
final class HostPersistence {
    /// Runs the transactions.
    let writer: DurableWriter
    private let state: SourceOfTruth
    private let persisted: [String: Set<String>]
    /// What the file holds for each persisted property of the model (absent: nothing).
    private var durable: [String: [String: Value]] = [:]
    /// For each keyed collection stored element by element: each element's stored position,
    /// by id (absent: stored whole, or not yet; its next write stores every element).
    private var durablePositions: [String: [String: [Value: Double]]] = [:]
    /// The positions a transaction in flight will store, made durable by ``markDurable(_:)``.
    private var pendingPositions: [String: [String: [Value: Double]]] = [:]
    /// The persisted keyed collections (an `IdentifiedArray` property), by object.
    private var keyed: [String: Set<String>] = [:]
    /// The answers the file remembers, for the write ledger.
    private(set) var storedAnswers: [StoredAnswer] = []
    private let logger: Logger

    /// Opens the store when an object has persisted properties, restores their stored values
    /// into the host state (stored values win over defaults), and returns the persistence.
    /// - Parameters:
    ///   - persistence: where the host keeps its database (``HostConfiguration/persistence``).
    ///   - store: a store to use instead (``HostConfiguration/propertyStore``).
    ///   - hostName: the host's name, which names the default database file.
    ///   - lockTimeout: how long to wait for another process's lock on the file.
    /// - Returns: `nil` when nothing is persisted or persistence is disabled.
    /// - Throws: ``PersistenceError`` naming the file and what to do.
    static func open(
        _ persistence: Persistence, store opener: PropertyStoreOpener?, hostName: String, lockTimeout: Duration, logger: Logger,
        objects: [ObjectDefinition], state: SourceOfTruth
    ) throws(PersistenceError) -> HostPersistence? {
        var persisted: [String: Set<String>] = [:]
        for object in objects {
            let names = Set(object.properties.filter(\.isPersisted).map(\.name))
            if !names.isEmpty { persisted[object.name] = names }
        }
        guard !persisted.isEmpty else { return nil }
        let store: any PropertyStore
        if let opener {
            store = try opener()
        } else if let path = persistence.path(hostName: hostName) {
            store = try SQLitePropertyStore(path: path, lockTimeout: lockTimeout)
        } else {
            return nil
        }
        let contents: StoredContents
        do throws(PersistenceError) {
            contents = try store.load()
        } catch {
            store.close()
            throw error
        }
        let opened = HostPersistence(store: store, state: state, persisted: persisted, logger: logger)
        for object in objects {
            let names = Set(object.properties.filter { $0.isPersisted && $0.normalizeElement != nil }.map(\.name))
            if !names.isEmpty { opened.keyed[object.name] = names }
        }
        opened.restore(contents, objects: objects)
        return opened
    }

    private init(store: any PropertyStore, state: SourceOfTruth, persisted: [String: Set<String>], logger: Logger) {
        self.writer = DurableWriter(store: store)
        self.state = state
        self.persisted = persisted
        self.logger = logger
    }

    private func restore(_ contents: StoredContents, objects: [ObjectDefinition]) {
        let definitions = Dictionary(uniqueKeysWithValues: objects.map { ($0.name, $0) })
        for row in contents.unreadable {
            // Reported and skipped: one damaged row must not keep every other object (or
            // every other host sharing nothing with it) from starting.
            let fallback =
                definitions[row.object]?.property(named: row.property).map { "starts from its default \($0.defaultValue)" }
                ?? "is not served by this host"
            logger.warning(
                "stored \(row.object).\(row.property) in \(writer.location) cannot be read (\(row.reason)); it \(fallback), and the row is overwritten at its next write"
            )
        }
        var restored: [String: [String: Value]] = [:]
        for stored in contents.properties {
            // A stored property the model no longer has (or no longer persists) stays in the
            // file, untouched, and is ignored.
            guard let property = definitions[stored.object]?.property(named: stored.property), property.isPersisted else { continue }
            do {
                let value = try property.normalize(stored.value)
                restored[stored.object, default: [:]][stored.property] = value
                if let positions = stored.positions, case .list(let items) = value, items.count == positions.count {
                    var byID: [Value: Double] = [:]
                    for (item, position) in zip(items, positions) { if let id = item.elementID { byID[id] = position } }
                    durablePositions[stored.object, default: [:]][stored.property] = byID
                }
            } catch {
                logger.warning(
                    "stored \(stored.object).\(stored.property) = \(stored.value) no longer fits its type \(property.typeName) (\(error.message)); using the default \(property.defaultValue). The stored value stays in \(writer.location) until the property is written."
                )
            }
        }
        for (object, values) in restored { state.restore(values, in: object) }
        durable = restored
        storedAnswers = contents.answers.filter { definitions[$0.object] != nil }
    }

    /// The first of `properties` of `object` that is persisted, if any: a write touching it
    /// must wait for a commit, and a `persistenceFailed` answer names it.
    func firstPersisted(_ object: String, _ properties: [String]) -> String? {
        guard let names = persisted[object] else { return nil }
        return properties.first(where: names.contains)
    }

    /// Whether a batch changed a persisted property.
    func touchesPersisted(_ batch: AppliedBatch) -> Bool {
        guard let names = persisted[batch.object] else { return false }
        return batch.changes.contains { names.contains($0.change.property) }
    }

    /// The persisted properties a batch changed, added to `touched`.
    func collectTouched(by batch: AppliedBatch, into touched: inout [String: Set<String>]) {
        guard let names = persisted[batch.object] else { return }
        for resolved in batch.changes where names.contains(resolved.change.property) {
            touched[batch.object, default: []].insert(resolved.change.property)
        }
    }

    /// The rows a transaction must write for these properties: their current values, where
    /// they differ from the file. The current value may already include a later batch: storing
    /// it early is harmless, and that batch's own commit then finds nothing left to do.
    func rows(for touched: [String: Set<String>]) -> [StoredProperty] {
        var rows: [StoredProperty] = []
        state.inner.withLock { inner in
            for (object, names) in touched {
                guard let store = inner.store(object, in: state) else { continue }
                for name in names.sorted() {
                    guard let value = store.value(of: name), durable[object]?[name] != value else { continue }
                    var row = StoredProperty(object: object, property: name, value: value, version: store.version(of: name) ?? 0)
                    if keyed[object]?.contains(name) == true {
                        let (elements, positions) = Self.elementRows(
                            from: durable[object]?[name], positions: durablePositions[object]?[name], to: value)
                        row.elements = elements
                        pendingPositions[object, default: [:]][name] = positions
                    }
                    rows.append(row)
                }
            }
        }
        return rows
    }

    /// Records that a transaction of `rows` is on disk.
    func markDurable(_ rows: [StoredProperty]) {
        for row in rows {
            durable[row.object, default: [:]][row.property] = row.value
            if row.elements != nil {
                durablePositions[row.object, default: [:]][row.property] = pendingPositions[row.object]?[row.property]
                pendingPositions[row.object]?[row.property] = nil
            }
        }
    }

    /// The element rows that turn the stored collection into `current`: one row per element
    /// inserted, moved or changed, one deletion per element removed; every element when the
    /// file does not hold the collection element by element yet, or when most of it changed.
    /// Positions are real numbers: an element inserted or moved between two others takes the
    /// middle of theirs, so the others keep their rows.
    static func elementRows(from stored: Value?, positions: [Value: Double]?, to current: Value) -> ([StoredElementChange], [Value: Double]) {
        func all() -> ([StoredElementChange], [Value: Double]) {
            guard case .list(let items) = current else { return ([.replaceAll([])], [:]) }
            var byID: [Value: Double] = [:]
            for (index, item) in items.enumerated() { if let id = item.elementID { byID[id] = Double(index) } }
            return ([.replaceAll(items)], byID)
        }
        guard let stored, var positions, case .list(let storedItems) = stored, case .list(let items) = current,
            let changes = stored.elementChanges(to: current)
        else { return all() }
        var order = storedItems.compactMap(\.elementID)
        guard order.count == storedItems.count, order.allSatisfy({ positions[$0] != nil }) else { return all() }
        var currentByID: [Value: Value] = [:]
        for item in items { if let id = item.elementID { currentByID[id] = item } }
        var rows: [StoredElementChange] = []
        /// The position between the neighbours of `index` in `order`.
        func position(at index: Int) -> Double? {
            let before = index > 0 ? positions[order[index - 1]] : nil
            let after = index + 1 < order.count ? positions[order[index + 1]] : nil
            switch (before, after) {
            case (let before?, let after?):
                let middle = (before + after) / 2
                return middle > before && middle < after ? middle : nil  // no room left: store all
            case (let before?, nil): return before + 1
            case (nil, let after?): return after - 1
            case (nil, nil): return 0
            }
        }
        for change in changes {
            switch (change.operation, change.path.components.first) {
            case (.remove, .id(let id)?):
                order.removeAll { $0 == id }
                positions[id] = nil
                rows.append(.delete(id: id))
            case (.move, .id(let id)?):
                order.removeAll { $0 == id }
                let index = min(max(0, change.position), order.count)
                order.insert(id, at: index)
                guard let place = position(at: index), let element = currentByID[id] else { return all() }
                positions[id] = place
                rows.append(.upsert(id: id, position: place, value: element))
            case (.insert, nil):
                guard let id = change.value.elementID, let element = currentByID[id] else { return all() }
                let index = min(max(0, change.position), order.count)
                order.insert(id, at: index)
                guard let place = position(at: index) else { return all() }
                positions[id] = place
                rows.append(.upsert(id: id, position: place, value: element))
            case (.replace, .id(let id)?):
                guard let place = positions[id], let element = currentByID[id] else { return all() }
                rows.append(.upsert(id: id, position: place, value: element))
            default:
                return all()
            }
        }
        return (rows, positions)
    }

    /// Sets the properties of a failed transaction back to what the file holds, each in a
    /// batch of its own with compare-and-set on the version we tried to store.
    func compensate(_ rows: [StoredProperty], after error: PersistenceError) {
        logger.error("persisting \(rows.count) properties failed, so they are set back to their stored values: \(error)")
        for row in rows {
            pendingPositions[row.object]?[row.property] = nil
            let fallback = state.withStore(row.object) { $0.definition.property(named: row.property)?.defaultValue } ?? nil
            guard let value = durable[row.object]?[row.property] ?? fallback else { continue }
            let change = PropertyChange(row.property, to: value, expectedVersion: row.version)
            // A version conflict means a newer value arrived meanwhile: it gets its own commit.
            _ = try? state.apply([change], to: row.object, fromView: nil, writeID: 0)
        }
    }
}

extension SourceOfTruth {
    /// Sets restored values before the host serves anything (no sequence, no publication).
    func restore(_ values: [String: Value], in object: String) {
        guard let index = index(of: object) else { return }
        inner.withLock { inner in
            inner.stores[index] = ObjectStore(definition: inner.stores[index].definition, restored: values)
        }
    }
}
