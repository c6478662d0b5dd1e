import CoreMetrics
import Dispatch
import Synchronization

/// The host's commit thread: runs the database transactions of the group commit, so the I/O
/// loop goes on (joins, pings, writes of properties that are not persisted, other objects)
/// while a commit waits for the disk or for a lock another process holds.
///
/// One transaction at a time, in the order asked. The loop hands over a transaction with
/// ``commit(_:answers:then:)`` and hears the outcome through its completion; at shutdown it
/// waits for the transaction in progress with ``waitUntilIdle()``.
final class DurableWriter: @unchecked Sendable {
    // Why `@unchecked Sendable` is sound: `store` is not thread-safe, and after `init` it is
    // touched only by closures on `queue`, a serial queue, so by one thread at a time and in
    // order (``close()`` too runs there). `commitCount` is an atomic.
    private let store: any PropertyStore
    private let queue = DispatchQueue(label: "statebus.commit")
    private let commits = Atomic<Int>(0)
    /// How long each transaction took, and how many views' writes it made durable.
    private let commitDuration = Timer(label: "statebus_host_commit_duration_seconds")
    private let writesPerCommit = Recorder(label: "statebus_host_writes_per_commit", aggregate: true)

    /// The file, for messages.
    let location: String

    /// Takes over a store that the caller has finished reading.
    init(store: any PropertyStore) {
        self.store = store
        self.location = store.location
        commits.store(store.commitCount, ordering: .relaxed)
    }

    /// Transactions committed so far.
    var commitCount: Int { commits.load(ordering: .relaxed) }

    /// Writes `rows` and `answers` in one transaction on the commit thread, then calls
    /// `completion` there with `nil` (durable) or the error (nothing written).
    func commit(_ rows: [StoredProperty], answers: [StoredAnswer], then completion: @escaping @Sendable (PersistenceError?) -> Void) {
        queue.async { [self] in
            dispatchPrecondition(condition: .onQueue(queue))
            do throws(PersistenceError) {
                let started = ContinuousClock.now
                try store.save(rows, answers: answers)
                commitDuration.recordInterval(since: started)
                writesPerCommit.record(answers.count)
                commits.store(store.commitCount, ordering: .relaxed)
                completion(nil)
            } catch {
                completion(error)
            }
        }
    }

    /// Returns once every transaction asked for so far has finished.
    func waitUntilIdle() {
        queue.sync {}
    }

    /// Fault injection for tests, on the commit thread: see
    /// ``SQLitePropertyStore/forbidGrowthForTesting()``.
    func forbidGrowthForTesting() throws(PersistenceError) {
        let outcome: Result<Void, PersistenceError> = queue.sync {
            do throws(PersistenceError) {
                try (store as? SQLitePropertyStore)?.forbidGrowthForTesting()
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try outcome.get()
    }

    /// Closes the store after the transactions asked for, releasing the file for the next host.
    func close() {
        queue.sync { store.close() }
    }
}
