import Logging
import StateBusWire

/// The host's side of persisted properties: restores them at start, and commits the ones a
/// group of batches changed before those batches are published and acknowledged.
///
/// Lives on the host's I/O loop thread. Group commit: everything applied in one turn of the
/// loop (a burst of writes drained from the control socket, the host's own sets) is
/// committed in one transaction, so durability costs one fsync per turn, not per write.
///
/// Only values that differ from the file are written: a property set back to its stored
/// value, or a compensation, costs no transaction.
///
/// Failure policy (roll back, keep serving): when a commit fails (a full disk, say), each
/// persisted property of the failed transaction that still holds the value we tried to
/// store is set back to its last durable value (the stored one, or the default when the
/// file has none) by a compensating host batch with compare-and-set, so a newer value set
/// meanwhile is never overwritten. The batches are published as they are (sequence numbers
/// stay contiguous, views converge on the durable state) and every waiting writer is
/// answered `persistenceFailed`. No write is acknowledged that is not durable, and the
/// host never claims a value its file does not hold for longer than one loop turn. The
/// next write tries the disk again.
final class HostPersistence {
    let store: any PropertyStore
    private let state: SourceOfTruth
    private let persisted: [String: Set<String>]
    /// What the file holds for each persisted property of the model (absent: nothing).
    private var durable: [String: [String: Value]] = [:]
    private let logger: Logger

    /// Opens the store when an object has persisted properties, restores their stored values
    /// into the host state (stored values win over defaults), and returns the persistence.
    /// - Returns: `nil` when nothing is persisted or persistence is disabled.
    /// - Throws: ``PersistenceError`` naming the file and what to do.
    static func open(configuration: HostConfiguration, objects: [ObjectDefinition], state: SourceOfTruth) throws(PersistenceError) -> HostPersistence?
    {
        var persisted: [String: Set<String>] = [:]
        for object in objects {
            let names = Set(object.properties.filter(\.isPersisted).map(\.name))
            if !names.isEmpty { persisted[object.name] = names }
        }
        guard !persisted.isEmpty, let path = configuration.persistence.path(hostName: configuration.name) else { return nil }
        let store = try SQLitePropertyStore(path: path)
        let persistence = HostPersistence(store: store, state: state, persisted: persisted, logger: configuration.logger)
        try persistence.restore(objects: objects)
        return persistence
    }

    private init(store: any PropertyStore, state: SourceOfTruth, persisted: [String: Set<String>], logger: Logger) {
        self.store = store
        self.state = state
        self.persisted = persisted
        self.logger = logger
    }

    private func restore(objects: [ObjectDefinition]) throws(PersistenceError) {
        let definitions = Dictionary(uniqueKeysWithValues: objects.map { ($0.name, $0) })
        var restored: [String: [String: Value]] = [:]
        for stored in try store.loadAll() {
            // A stored property the model no longer has (or no longer persists) stays in the
            // file, untouched, and is ignored.
            guard let property = definitions[stored.object]?.property(named: stored.property), property.isPersisted else { continue }
            do {
                restored[stored.object, default: [:]][stored.property] = try property.normalize(stored.value)
            } catch {
                logger.warning(
                    "stored \(stored.object).\(stored.property) = \(stored.value) no longer fits its type \(property.typeName) (\(error.message)); using the default \(property.defaultValue). The stored value stays in \(store.location) until the property is written."
                )
            }
        }
        for (object, values) in restored { state.restore(values, in: object) }
        durable = restored
    }

    /// Whether a write to `object` touching these properties must wait for a commit.
    func touchesPersisted(_ object: String, _ properties: [String]) -> Bool {
        guard let names = persisted[object] else { return false }
        return properties.contains(where: names.contains)
    }

    /// Commits the persisted properties the batches changed, in one transaction.
    /// - Returns: `nil` when durable (or nothing to commit), else the error, after the
    ///   compensating batches have been queued.
    func commit(_ batches: [AppliedBatch]) -> PersistenceError? {
        var touched: [String: Set<String>] = [:]
        for batch in batches {
            guard let names = persisted[batch.object] else { continue }
            for resolved in batch.changes where names.contains(resolved.change.property) {
                touched[batch.object, default: []].insert(resolved.change.property)
            }
        }
        guard !touched.isEmpty else { return nil }
        // The current values, which may already include a later host update: storing it early
        // is harmless, and its own commit then finds nothing left to do.
        var rows: [StoredProperty] = []
        state.inner.withLock { inner in
            for (object, names) in touched {
                guard let store = inner.stores[object] else { continue }
                for name in names.sorted() {
                    guard let value = store.values[name], durable[object]?[name] != value else { continue }
                    rows.append(StoredProperty(object: object, property: name, value: value, version: store.versions[name, default: 0]))
                }
            }
        }
        guard !rows.isEmpty else { return nil }
        do {
            try store.save(rows)
            for row in rows { durable[row.object, default: [:]][row.property] = row.value }
            return nil
        } catch {
            logger.error("persisting \(rows.count) properties failed, so they are set back to their stored values: \(error)")
            compensate(rows)
            return error
        }
    }

    /// Sets the properties of a failed transaction back to what the file holds, each in a
    /// batch of its own with compare-and-set on the version we tried to store.
    private func compensate(_ rows: [StoredProperty]) {
        for row in rows {
            let fallback = state.inner.withLock { $0.stores[row.object]?.definition.property(named: row.property)?.defaultValue }
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
        inner.withLock { inner in
            guard let store = inner.stores[object] else { return }
            inner.stores[object] = ObjectStore(definition: store.definition, restored: values)
        }
    }
}
