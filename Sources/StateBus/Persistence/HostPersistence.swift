import Logging
import StateBusWire

/// The host's side of persisted properties: restores them at start, and commits the ones a
/// group of batches changed before those batches are published and acknowledged.
///
/// Lives on the host's I/O loop thread. Group commit: everything applied in one turn of the
/// loop (a burst of writes drained from the control socket, the host's own sets) is
/// committed in one transaction, so durability costs one fsync per turn, not per write.
///
/// Failure policy: when a commit fails (a full disk, say), the touched persisted properties
/// are set back to their last durable values by a compensating host batch, the batches are
/// published as they are (sequence numbers stay contiguous, so views converge on the
/// durable state), and every waiting writer is answered `persistenceFailed`. No write is
/// acknowledged that is not durable.
final class HostPersistence {
    let store: any PropertyStore
    private let state: HostState
    private let persisted: [String: Set<String>]
    /// The last durable value of every persisted property, for compensation.
    private var durable: [String: [String: Value]] = [:]
    private let logger: Logger

    /// Opens the store when an object has persisted properties, restores their stored values
    /// into the host state (stored values win over defaults), and returns the persistence.
    /// - Returns: `nil` when nothing is persisted or persistence is disabled.
    /// - Throws: ``PersistenceError`` naming the file and what to do.
    static func open(configuration: HostConfiguration, objects: [ObjectDefinition], state: HostState) throws(PersistenceError) -> HostPersistence? {
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

    private init(store: any PropertyStore, state: HostState, persisted: [String: Set<String>], logger: Logger) {
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
                logger.warning("stored \(stored.object).\(stored.property) = \(stored.value) no longer fits its type \(property.typeName) (\(error.message)); using the default \(property.defaultValue). The stored value stays in \(store.location) until the property is written.")
            }
        }
        for (object, values) in restored { state.restore(values, in: object) }
        for (object, names) in persisted {
            let values = state.inner.withLock { $0.stores[object]?.values ?? [:] }
            durable[object] = values.filter { names.contains($0.key) }
        }
    }

    /// Whether a write to `object` touching these properties must wait for a commit.
    func touchesPersisted(_ object: String, _ properties: [String]) -> Bool {
        guard let names = persisted[object] else { return false }
        return properties.contains(where: names.contains)
    }

    /// Commits the persisted properties the batches changed.
    /// - Returns: `nil` when durable (or nothing to commit), else the error, after the
    ///   compensating batch has been applied.
    func commit(_ batches: [(object: String, batch: Statebus_V1_UpdateBatch)]) -> PersistenceError? {
        var touched: [String: Set<String>] = [:]
        for (object, batch) in batches {
            guard let names = persisted[object] else { continue }
            for change in batch.changes where names.contains(change.property) { touched[object, default: []].insert(change.property) }
        }
        guard !touched.isEmpty else { return nil }
        var rows: [StoredProperty] = []
        var newValues: [String: [String: Value]] = [:]
        state.inner.withLock { inner in
            for (object, names) in touched {
                guard let store = inner.stores[object] else { continue }
                for name in names {
                    guard let value = store.values[name] else { continue }
                    rows.append(StoredProperty(object: object, property: name, value: value, version: store.versions[name, default: 0]))
                    newValues[object, default: [:]][name] = value
                }
            }
        }
        do {
            try store.save(rows)
            for (object, values) in newValues { durable[object, default: [:]].merge(values) { _, new in new } }
            return nil
        } catch {
            logger.error("persisting \(rows.count) properties failed: \(error)")
            for (object, names) in touched {
                let restore = names.compactMap { name in durable[object]?[name].map { PropertyChange(name, to: $0) } }
                if !restore.isEmpty { _ = try? state.apply(restore, to: object, fromView: nil, writeID: 0) }
            }
            return error
        }
    }
}

extension HostState {
    /// Sets restored values before the host serves anything (no sequence, no publication).
    func restore(_ values: [String: Value], in object: String) {
        inner.withLock { inner in
            guard let store = inner.stores[object] else { return }
            inner.stores[object] = ObjectStore(definition: store.definition, restored: values)
        }
    }
}
