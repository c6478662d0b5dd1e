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
    /// The answers the file remembers, for the write ledger.
    private(set) var storedAnswers: [StoredAnswer] = []
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
        let store = try SQLitePropertyStore(path: path, lockTimeout: configuration.databaseLockTimeout)
        let contents: StoredContents
        do throws(PersistenceError) {
            contents = try store.load()
        } catch {
            store.close()
            throw error
        }
        let persistence = HostPersistence(store: store, state: state, persisted: persisted, logger: configuration.logger)
        persistence.restore(contents, objects: objects)
        return persistence
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
                restored[stored.object, default: [:]][stored.property] = try property.normalize(stored.value)
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

    /// Whether a write to `object` touching these properties must wait for a commit.
    func touchesPersisted(_ object: String, _ properties: [String]) -> Bool {
        guard let names = persisted[object] else { return false }
        return properties.contains(where: names.contains)
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
                guard let store = inner.stores[object] else { continue }
                for name in names.sorted() {
                    guard let value = store.values[name], durable[object]?[name] != value else { continue }
                    rows.append(StoredProperty(object: object, property: name, value: value, version: store.versions[name, default: 0]))
                }
            }
        }
        return rows
    }

    /// Records that a transaction of `rows` is on disk.
    func markDurable(_ rows: [StoredProperty]) {
        for row in rows { durable[row.object, default: [:]][row.property] = row.value }
    }

    /// Sets the properties of a failed transaction back to what the file holds, each in a
    /// batch of its own with compare-and-set on the version we tried to store.
    func compensate(_ rows: [StoredProperty], after error: PersistenceError) {
        logger.error("persisting \(rows.count) properties failed, so they are set back to their stored values: \(error)")
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
