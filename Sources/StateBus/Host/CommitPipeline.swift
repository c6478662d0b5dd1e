/// The host's group commit: takes every batch the source of truth has queued, makes their
/// persisted properties durable in one transaction, and says which batches may go out and
/// what each waiter is told.
///
/// Runs on the host's I/O loop (``HostServer/publishPending()``), which then publishes the
/// batches and answers the writes that waited; this type knows nothing about sockets or the
/// wire.
struct CommitPipeline {
    /// Where the batches queue.
    let truth: SourceOfTruth
    /// The database, when any object has persisted properties.
    let persistence: HostPersistence?

    /// What a run of the pipeline decided.
    struct Outcome {
        /// Every batch taken, in sequence order: all of them are published, since a failed
        /// commit was compensated by later batches in the same list.
        var batches: [AppliedBatch] = []
        /// The first transaction's error: the outcome of every view write that waited for
        /// this turn's commit. `nil` when durable or when nothing needed a commit.
        var failure: PersistenceError?
        /// The ``StateHost/applyDurably(_:to:)`` waiters, each with its outcome (`nil` for
        /// durable).
        var waiters: [(SourceOfTruth.DurabilityWaiter, StateBusError?)] = []
    }

    /// Commits what is queued.
    func run() -> Outcome {
        var outcome = Outcome()
        var round = 0
        while true {
            let taken = truth.takeUnpublished()
            if round > 0, taken.batches.isEmpty, taken.waiters.isEmpty { break }
            let failure = persistence?.commit(taken.batches)
            // The first round holds every view write waiting in the server's replies
            // (applied on the loop thread): its outcome is theirs.
            if round == 0 { outcome.failure = failure }
            outcome.batches += taken.batches
            // A failed transaction fails the waiters whose batch touched persisted
            // properties; the others' changes stand.
            outcome.waiters += taken.waiters.map { entry in
                guard let failure, persistence?.touchesPersisted(entry.object, entry.properties) == true else { return (entry.waiter, nil) }
                return (
                    entry.waiter,
                    StateBusError(
                        .persistenceFailed,
                        "the host could not make the change durable, so its persisted properties were set back to their stored values: \(failure)",
                        object: entry.object)
                )
            }
            round += 1
            // A failed commit queued compensations, and other threads may have applied
            // batches meanwhile: another round commits what they changed (compensations need
            // no transaction: they restore what the file holds), so nothing is published that
            // the file does not hold.
            if failure == nil { break }
        }
        return outcome
    }
}
