import StateBusRuntime
import StateBusWire

/// A view write's answer, waiting for its batch to be published (and, when the write touched
/// persisted properties, for the batch's group commit).
struct PendingReply {
    /// Who to answer, in which version.
    var requester: Requester
    var verdict: WriteVerdict
    /// The object and sequence of the batch the write made (none for a copy).
    var object: String
    var sequence: UInt64
    /// Whether the write touched persisted properties: its acceptance waits for the commit,
    /// and a failed commit turns it into `persistenceFailed`.
    var durable: Bool
    /// The first persisted property the write changed, which a `persistenceFailed` answer
    /// names (empty when it changed none).
    var persistedProperty = ""
    var view: String
    var writeID: UInt64
    /// The digest stored with a durable write's answer (``WriteDigest``).
    var digest: UInt64
    /// A copy of a write the ledger answered: its answer is read from the ledger when sent,
    /// since the first copy's may still change (a failed commit).
    var isCopy: Bool
}

/// The host's group commit: decides which applied batches may be published at once and
/// which wait for a transaction, runs one transaction at a time on the commit thread
/// (``DurableWriter``), and hands back, in order, the groups whose transaction finished.
///
/// **What waits.** A batch that changed a persisted property waits for the transaction that
/// stores it, and so does every later batch of the same object (a view applies an object's
/// batches in sequence order). Batches of other objects, joins, pings and rejected writes go
/// on meanwhile. A view write's answer goes out with its batch; a durable write's answer is
/// stored in the same transaction as its values (``StoredAnswer``), so the next host honours
/// it after a crash.
///
/// **Groups.** Everything held while no transaction runs forms the next group; when the
/// running transaction finishes, its group is released and the next group's transaction
/// starts with the current values of every persisted property the group touched: one
/// transaction (one fsync) for everything that queued up behind the disk.
///
/// Lives on the host's I/O loop thread; the commit thread only runs the transaction and
/// calls ``wake`` to have the loop collect the outcome.
final class CommitPipeline {
    /// A group of held batches, their answers and waiters, committed together.
    struct Group {
        /// The persisted properties its batches changed, per object.
        var touched: [String: Set<String>] = [:]
        /// Answers to durable view writes, stored in its transaction.
        var answers: [StoredAnswer] = []
        /// Its batches, in the order they were applied.
        var batches: [AppliedBatch] = []
        /// The batches that changed a persisted property, as "object/sequence" keys.
        var durableBatches: Set<BatchKey> = []
        var replies: [PendingReply] = []
        var waiters: [(waiter: SourceOfTruth.DurabilityWaiter, durable: Bool)] = []
        /// The view writes it answers.
        var writes: Set<WriteKey> = []

        var isEmpty: Bool { batches.isEmpty && replies.isEmpty && waiters.isEmpty && answers.isEmpty }
    }

    /// A batch, by object and sequence.
    struct BatchKey: Hashable {
        var object: String
        var sequence: UInt64
    }

    /// A view write, by view id and write id.
    struct WriteKey: Hashable {
        var view: String
        var writeID: UInt64
    }

    /// What goes out now, or when a group is released.
    struct Release {
        var batches: [AppliedBatch] = []
        /// Batches whose persisted changes were not stored: published without their
        /// origin (the writer hears `persistenceFailed` instead of an echo).
        var undurableBatches: Set<BatchKey> = []
        var replies: [PendingReply] = []
        var waiters: [(waiter: SourceOfTruth.DurabilityWaiter, durable: Bool)] = []
        /// The transaction's error, for the durable replies and waiters.
        var failure: PersistenceError?
        /// Whether ``take(replies:)`` took a burst of the host's own changes: the source of
        /// truth then expects the loop to publish again soon without being asked.
        var burst = false
    }

    private let truth: SourceOfTruth
    private let persistence: HostPersistence?
    /// Called on the commit thread when a transaction finished: it must make the loop call
    /// ``advance()`` (``HostServer/publishPending()``).
    private let wake: @Sendable () -> Void
    /// The group being formed.
    private var next = Group()
    /// The group whose transaction runs, and the rows it writes.
    private var running: (group: Group, rows: [StoredProperty])?
    /// The outcome of the running transaction, set on the commit thread.
    private let outcome = TransactionOutcome()
    /// Held batches per object.
    private var heldBatches: [String: Int] = [:]
    /// What the batches of `next` and `running` hold, in bytes (``AppliedBatch/queuedBytes``),
    /// told to the source of truth (``SourceOfTruth/noteHeld(bytes:)``) after each take and
    /// advance: they count against ``HostLimits/maxUnpublishedBytes`` until released.
    private var heldBytes = 0

    init(truth: SourceOfTruth, persistence: HostPersistence?, wake: @escaping @Sendable () -> Void) {
        self.truth = truth
        self.persistence = persistence
        self.wake = wake
    }

    /// Whether nothing is held and no transaction runs.
    var isIdle: Bool { running == nil && next.isEmpty }

    /// Takes every batch the source of truth has queued, with the replies of the view writes
    /// that made them (in the order handled), and returns what may go out now; the rest is
    /// held for a group commit.
    func take(replies: [PendingReply]) -> Release {
        let taken = truth.takeUnpublished()
        defer { if heldBytes > 0 { truth.noteHeld(bytes: heldBytes) } }
        var now = Release()
        now.burst = taken.burst
        var held: Set<BatchKey> = []
        // Commonly nothing is held: the whole list goes out as it is, not copied batch by
        // batch (a burst of the host's own changes is a list of a hundred thousand).
        // Without persistence and with nothing held, nothing can be: the list is not even
        // walked (each look at a batch copies it, its strings and values retained).
        let firstHeld =
            persistence == nil && heldBatches.isEmpty
            ? nil
            : taken.batches.firstIndex { batch in
                persistence?.touchesPersisted(batch) ?? false || (!heldBatches.isEmpty && heldBatches[batch.object, default: 0] > 0)
            }
        let heldFrom = firstHeld ?? taken.batches.endIndex
        if heldFrom == taken.batches.endIndex {
            now.batches = taken.batches
        } else {
            now.batches = Array(taken.batches[..<heldFrom])
        }
        for batch in taken.batches[heldFrom...] {
            let key = BatchKey(object: batch.object, sequence: batch.sequence)
            let durable = persistence?.touchesPersisted(batch) ?? false
            guard durable || heldBatches[batch.object, default: 0] > 0 else {
                now.batches.append(batch)
                continue
            }
            held.insert(key)
            heldBatches[batch.object, default: 0] += 1
            heldBytes += batch.queuedBytes
            next.batches.append(batch)
            if durable {
                next.durableBatches.insert(key)
                persistence?.collectTouched(by: batch, into: &next.touched)
            }
        }
        for reply in replies {
            let key = WriteKey(view: reply.view, writeID: reply.writeID)
            if reply.isCopy {
                // After the first copy's answer, wherever that is.
                if isAwaiting(key) { next.replies.append(reply) } else { now.replies.append(reply) }
            } else if held.contains(BatchKey(object: reply.object, sequence: reply.sequence)) {
                next.replies.append(reply)
                if !reply.view.isEmpty { next.writes.insert(key) }
                if reply.durable, !reply.view.isEmpty {
                    next.answers.append(StoredAnswer(view: reply.view, writeID: reply.writeID, digest: reply.digest, object: reply.object))
                }
            } else {
                now.replies.append(reply)
            }
        }
        for entry in taken.waiters {
            let key = BatchKey(object: entry.object, sequence: entry.sequence)
            if held.contains(key) {
                next.waiters.append((entry.waiter, next.durableBatches.contains(key)))
            } else {
                now.waiters.append((entry.waiter, false))
            }
        }
        return now
    }

    /// Whether a view write's answer waits in a group.
    func isAwaiting(_ write: WriteKey) -> Bool {
        next.writes.contains(write) || running?.group.writes.contains(write) == true
    }

    /// Collects the running transaction if it finished and starts the next one: returns the
    /// groups released, oldest first (a group with nothing to write is released at once).
    func advance() -> [Release] {
        var released: [Release] = []
        let heldBefore = heldBytes
        defer { if heldBytes != heldBefore { truth.noteHeld(bytes: heldBytes) } }
        if running != nil,
            let finished = outcome.slot.withLock({ stored -> PersistenceError?? in
                defer { stored = nil }
                return stored
            })
        {
            let (group, rows) = running!
            running = nil
            if let failure = finished {
                persistence?.compensate(rows, after: failure)
            } else {
                persistence?.markDurable(rows)
            }
            released.append(release(group, failure: finished))
        }
        guard running == nil, !next.isEmpty else { return released }
        let group = next
        next = Group()
        let rows = persistence?.rows(for: group.touched) ?? []
        guard let persistence, !rows.isEmpty || !group.answers.isEmpty else {
            released.append(release(group, failure: nil))
            return released
        }
        running = (group, rows)
        persistence.writer.commit(rows, answers: group.answers) { [outcome, wake] error in
            outcome.slot.withLock { $0 = .some(error) }
            wake()
        }
        return released
    }

    private func release(_ group: Group, failure: PersistenceError?) -> Release {
        for batch in group.batches {
            heldBatches[batch.object, default: 1] -= 1
            if heldBatches[batch.object] == 0 { heldBatches[batch.object] = nil }
            heldBytes -= batch.queuedBytes
        }
        return Release(
            batches: group.batches, undurableBatches: failure == nil ? [] : group.durableBatches, replies: group.replies,
            waiters: group.waiters, failure: failure)
    }

    /// Waits for the running transaction (at shutdown: the loop no longer collects it).
    func waitForRunningTransaction() {
        persistence?.writer.waitUntilIdle()
    }
}

/// Where the commit thread leaves a transaction's outcome for the loop: `nil` while it
/// runs, `.some(nil)` once durable, `.some(error)` when it failed.
private final class TransactionOutcome: Sendable {
    let slot = Locked<PersistenceError??>(nil)
}
