/// What one turn of the host's loop has done so far, and so what it must still do: a turn is
/// one look at the control socket (up to 256 requests), or one tick of the backlog timer.
///
/// The decisions about *when* the host answers and publishes within a turn are made here,
/// from what the loop saw (a write applied, a request turn ending, a burst of the host's own
/// changes, the burst timer firing); ``HostServer`` carries them out (sockets, timers, the
/// commit pipeline). What a group commit holds back is the ``CommitPipeline``'s to say, and
/// a backlog drain or a heartbeat publishes whatever is pending:
/// - Everything a turn handles is published, and its answers sent, together at the turn's
///   end (``end()``).
/// - A write that nothing else waits for (not durable, no commit running, no answer held
///   before it) is answered at once, and the first such write of a turn is published at
///   once too, so that a single writer's round trip does not wait for the turn's
///   bookkeeping; later ones, a burst, share the turn's last publication
///   (``route(appliedWrite:)``).
/// - A burst of the host's own changes gathers on a timer (``publicationSawBurst()``).
///
/// A value, owned by the host's loop thread; no I/O.
struct HostTurn {
    /// What the write path knows about a write it has just applied.
    struct AppliedWrite {
        /// It touched a persisted property: its answer and batch wait for its group commit.
        var durable: Bool
        /// No group commit is queued or running (an answer must not overtake its answers).
        var commitIdle: Bool
        /// The writer takes the write's publication as its acceptance (no answer is sent).
        var confirmsByEcho: Bool
    }

    /// How an applied write is answered and published.
    enum WriteRoute: Equatable {
        /// Answered now (`answer` is `false` for a writer that confirms by echo), its batch
        /// due; `publishNow`: publish at once and then yield the CPU (the turn's first such
        /// write), else the batch goes out at the turn's end.
        case atOnce(answer: Bool, publishNow: Bool)
        /// Its answer is held (``hold(_:)``) and goes out with its batch's publication: at
        /// the turn's end, or after its group commit.
        case held
    }

    /// What the loop does when a turn of the control socket ends.
    struct Ending: Equatable {
        /// Publish the batches due and send the answers held.
        var publish: Bool
        /// Yield the CPU after publishing: answers and batches are in libzmq's queues, and
        /// its I/O thread, when it shares this CPU, sends them only once the loop sleeps or
        /// yields.
        var yieldCPU: Bool
        /// Keep the loop awake for a while (``HostConfiguration/busyPollingAfterWrites``):
        /// the writer may write again within a round trip.
        var pollBusily: Bool
    }

    /// Answers to the writes handled since the last publication, in order: each goes out
    /// with its batch, at the end of the turn at the latest (or after its group commit).
    private(set) var heldReplies: [PendingReply] = []
    /// Whether a batch whose answer already went out (or that is confirmed by echo) still
    /// has to be published.
    private(set) var publishDue = false
    /// Whether this turn already published a write at once.
    private(set) var publishedAtOnce = false
    /// Whether this turn handled a write (accepted, refused, or a copy).
    private(set) var handledWrites = false
    /// Whether a publication of a burst of the host's own changes waits on the burst timer.
    private(set) var burstTimerArmed = false

    /// Forgets what the previous turn did (its held replies and due batches stay until they
    /// are published).
    mutating func start() {
        publishedAtOnce = false
        handledWrites = false
    }

    /// A view's write reached the write path.
    mutating func noteWrite() { handledWrites = true }

    /// Decides how a write just applied is answered and published, and records it.
    mutating func route(appliedWrite write: AppliedWrite) -> WriteRoute {
        // Only when nothing waits before it: its answer would overtake theirs.
        guard !write.durable, write.commitIdle, heldReplies.isEmpty else { return .held }
        publishDue = true
        let publishNow = !publishedAtOnce
        publishedAtOnce = true
        return .atOnce(answer: !write.confirmsByEcho, publishNow: publishNow)
    }

    /// Holds a write's answer until its batch is published.
    mutating func hold(_ reply: PendingReply) { heldReplies.append(reply) }

    /// Whether anything waits to be published or answered.
    var hasPending: Bool { !heldReplies.isEmpty || publishDue }

    /// Takes what is to be published and answered now; nothing is due afterwards.
    mutating func takePending() -> [PendingReply] {
        publishDue = false
        defer { heldReplies = [] }
        return heldReplies
    }

    /// What to do as a turn of the control socket ends (before the next starts).
    func end() -> Ending {
        Ending(publish: hasPending, yieldCPU: publishDue, pollBusily: handledWrites)
    }

    /// A publication found the host's own changes coming faster than turns of the loop.
    /// - Returns: whether to arm the burst timer (``burstTimerFired()`` when it fires), so
    ///   that the next publication gathers what comes in the meantime; `false` while it is
    ///   armed already.
    mutating func publicationSawBurst() -> Bool {
        guard !burstTimerArmed else { return false }
        burstTimerArmed = true
        return true
    }

    /// The burst timer fired: publish now; the next burst arms it again.
    mutating func burstTimerFired() { burstTimerArmed = false }
}
