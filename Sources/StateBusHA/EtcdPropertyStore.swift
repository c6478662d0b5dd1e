import Foundation
import StateBus
import StateBusEtcd
import StateBusWire

/// A high-availability group's persisted properties and durable-write answers, kept in etcd
/// by its leader, so that any host of the group that takes over serves them.
///
/// Every save is one etcd transaction, committed by a quorum of etcd's members before it
/// returns, and fenced: it commits only while the group's leader key is still the one this
/// leader created (``LeaderElection/fencingCompare(for:)``), so a deposed leader, however
/// late its request arrives, cannot commit. The host acknowledges a durable write only after
/// its save returned.
///
/// Layout under `/statebus/<group>/`: `data/<object>/<property>` holds a property's value
/// (its version, 8 bytes, then the value's protocol encoding); `answers/<view>/<last write
/// id>` holds the answers one save stored for one view (``StoredAnswerBatch``), under a lease
/// that ends them 5 to 10 minutes later, so the answers of views long gone leave by
/// themselves. Names are escaped so that a `/` in one cannot cross into another's key.
///
/// etcd's limits (its defaults): a transaction holds at most 128 operations
/// (`--max-txn-ops`) and 1.5 MiB (`--max-request-bytes`). A save needs one operation per
/// property and two per view with answers; a save past either limit fails with
/// `persistenceFailed` naming the limit, and its writes are refused, never half stored.
///
/// Called on the host's loop thread (``load()``) and then only on its commit thread, both
/// dedicated threads: the calls block them while etcd answers.
final class EtcdPropertyStore: PropertyStore {
    /// Operations in one transaction, etcd's default `--max-txn-ops`.
    static let maxOperations = 128
    /// Request bytes, a margin below etcd's default `--max-request-bytes` (1.5 MiB) for the
    /// transaction's own encoding.
    static let maxRequestBytes = 1_500_000

    private let client: EtcdClient
    private let prefix: String
    private let fence: EtcdCompare
    private let group: String
    /// Transactions committed.
    private(set) var commitCount = 0
    /// How long a commit keeps trying while etcd does not answer (a member lost, an election
    /// in etcd) before its writes fail.
    static let commitBudget = Duration.seconds(5)
    /// How long a lease of stored answers lives: 10 minutes.
    static let answersLeaseSeconds: Int64 = 600
    /// The lease the next answers are stored under, and when it was granted.
    private var currentAnswersLease: (id: Int64, granted: ContinuousClock.Instant)?

    /// Creates the store of a leader's term.
    /// - Parameters:
    ///   - client: the group's etcd client.
    ///   - group: the group's name.
    ///   - fence: the compare that holds while this host's term lasts.
    init(client: EtcdClient, group: String, fence: EtcdCompare) {
        self.client = client
        self.group = group
        self.prefix = "/statebus/\(group)/"
        self.fence = fence
    }

    var location: String { "etcd \(client.endpoints.joined(separator: ",")) \(prefix)" }

    func load() throws(PersistenceError) -> StoredContents {
        let client = self.client
        let dataPrefix = prefix + "data/"
        let answersPrefix = prefix + "answers/"
        let (data, answerRows) = try etcd("read the group's stored state") { () async throws(EtcdError) in
            let data = try await client.range(prefix: dataPrefix).keyValues
            let answers = try await client.range(prefix: answersPrefix).keyValues
            return (data, answers)
        }
        var properties: [StoredProperty] = []
        var unreadable: [UnreadableProperty] = []
        for row in data {
            let name = String(row.keyString.dropFirst(dataPrefix.count))
            let parts = name.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2 else { continue }
            let object = StoreKey.unescape(parts[0])
            let property = StoreKey.unescape(parts[1])
            guard row.value.count >= 8 else {
                unreadable.append(UnreadableProperty(object: object, property: property, reason: "the stored row is shorter than its version"))
                continue
            }
            var version: UInt64 = 0
            for (offset, byte) in row.value.prefix(8).enumerated() { version |= UInt64(byte) << UInt64(8 * offset) }
            do {
                let value = try Value(serializedBytes: row.value.dropFirst(8))
                properties.append(StoredProperty(object: object, property: property, value: value, version: version))
            } catch {
                unreadable.append(UnreadableProperty(object: object, property: property, reason: "the stored value cannot be decoded: \(error)"))
            }
        }
        var answers: [StoredAnswer] = []
        for row in answerRows {
            let name = String(row.keyString.dropFirst(answersPrefix.count))
            guard let slash = name.firstIndex(of: "/") else { continue }
            let view = StoreKey.unescape(name[..<slash])
            answers += StoredAnswerBatch.decode(row.value, view: view)
        }
        return StoredContents(properties: properties, unreadable: unreadable, answers: answers)
    }

    func save(_ properties: [StoredProperty], answers: [StoredAnswer]) throws(PersistenceError) {
        guard !properties.isEmpty || !answers.isEmpty else { return }
        var lease = answers.isEmpty ? nil : try answersLease()
        var result = try commit(properties, answers, lease: lease)
        if result == nil {
            // The answers' lease ran out since it was granted (the host was paused, or etcd
            // lost it): a new one, and the transaction once more.
            currentAnswersLease = nil
            lease = try answersLease()
            result = try commit(properties, answers, lease: lease)
        }
        guard let result, result.succeeded else {
            throw PersistenceError(
                .other, path: location,
                result == nil
                    ? "etcd refused the lease of the stored answers twice: the writes were not stored"
                    : "this host no longer leads group '\(group)' (its leader key changed in etcd): the writes were not stored; "
                        + "the group's new leader takes them")
        }
        commitCount += 1
    }

    /// The lease the answers of the next commits live under: a new one every half of its
    /// TTL, so that every answer lives between 5 and 10 minutes. A view sends a copy only of
    /// a write it has not heard answered, within its write timeout (30 s by default), so the
    /// answers a copy needs are there, and those of views long gone leave by themselves.
    private func answersLease() throws(PersistenceError) -> Int64 {
        if let current = currentAnswersLease, ContinuousClock.now - current.granted < .seconds(Self.answersLeaseSeconds / 2) {
            return current.id
        }
        let client = self.client
        let granted = try etcd("grant the lease of the stored answers") { () async throws(EtcdError) in
            try await client.grantLease(ttlSeconds: Self.answersLeaseSeconds)
        }
        currentAnswersLease = (granted.id, .now)
        return granted.id
    }

    /// Commits one transaction behind the fence.
    /// - Returns: etcd's answer, or `nil` when the answers' lease is gone.
    private func commit(_ properties: [StoredProperty], _ answers: [StoredAnswer], lease: Int64?) throws(PersistenceError) -> EtcdTransactionResult? {
        var operations: [EtcdOperation] = []
        var bytes = 0
        for property in properties {
            let encoded: [UInt8]
            do {
                encoded = try property.value.serializedBytes()
            } catch {
                throw PersistenceError(.other, path: location, "cannot encode \(property.object).\(property.property): \(error)")
            }
            var version = property.version
            let row =
                (0..<8).map { _ in
                    defer { version >>= 8 }
                    return UInt8(truncatingIfNeeded: version)
                } + encoded
            let key = Array((prefix + "data/" + StoreKey.escape(property.object) + "/" + StoreKey.escape(property.property)).utf8)
            bytes += key.count + row.count
            operations.append(.put(key: key, value: row))
        }
        for (view, batch) in Dictionary(grouping: answers, by: \.view) {
            let viewPrefix = prefix + "answers/" + StoreKey.escape(view) + "/"
            let last = batch.map(\.writeID).max() ?? 0
            let key = Array((viewPrefix + StoreKey.writeID(last)).utf8)
            let row = StoredAnswerBatch.encode(batch)
            bytes += key.count + row.count
            operations.append(.put(key: key, value: row, lease: lease))
            // The ledger answers a copy only of a write among a view's last answers: older
            // batches go.
            if last > UInt64(StoredAnswerLimits.perView) {
                let end = Array((viewPrefix + StoreKey.writeID(last - UInt64(StoredAnswerLimits.perView))).utf8)
                operations.append(.deleteRange(key: Array(viewPrefix.utf8), rangeEnd: end))
            }
        }
        guard operations.count <= Self.maxOperations else {
            throw PersistenceError(
                .other, path: location,
                "a commit of \(properties.count) properties and the answers of \(operations.count - properties.count) views needs "
                    + "\(operations.count) etcd operations; etcd takes at most \(Self.maxOperations) in one transaction (--max-txn-ops): "
                    + "the writes were not stored. Write fewer persisted properties at once")
        }
        guard bytes <= Self.maxRequestBytes else {
            throw PersistenceError(
                .other, path: location,
                "a commit of \(bytes) bytes exceeds what etcd takes in one request (--max-request-bytes, 1.5 MiB by default): "
                    + "the writes were not stored. Keep persisted values smaller")
        }
        let transaction = EtcdTransaction(compares: [fence], success: operations)
        let client = self.client
        // etcd may answer nothing for a moment (a member lost, its raft electing a leader):
        // the transaction is tried again until the budget is spent. Trying again is safe: its
        // puts and deletes give the same result twice, and the fence fails it once another
        // host leads.
        let deadline = ContinuousClock.now + Self.commitBudget
        while true {
            do {
                return try EtcdClient.waitBlocking { () async throws(EtcdError) in try await client.txn(transaction) }
            } catch  where error.kind == .leaseNotFound {
                return nil
            } catch  where (error.kind == .timeout || error.kind == .unreachable) && ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.05)
            } catch {
                throw failure("commit \(operations.count) operations", error)
            }
        }
    }

    func close() {}

    /// Runs etcd calls from this store's dedicated thread, turning etcd's errors into
    /// persistence failures that name etcd.
    private func etcd<T: Sendable>(_ what: String, _ body: @Sendable @escaping () async throws(EtcdError) -> T) throws(PersistenceError) -> T {
        do {
            return try EtcdClient.waitBlocking(body)
        } catch {
            throw failure(what, error)
        }
    }

    /// The persistence failure for an etcd error, naming etcd.
    private func failure(_ what: String, _ error: EtcdError) -> PersistenceError {
        let unknown =
            error.kind == .timeout
            ? " A commit that timed out may or may not have been stored: the group's next leader shows which." : ""
        return PersistenceError(.other, path: location, "could not \(what) in etcd: \(error).\(unknown)")
    }
}
