/// What one turn of the host's loop has done so far, and so what it must still do: a turn is
/// one look at the control socket (up to 256 requests), or one tick of the backlog timer.
///
/// Everything a turn handles is published, and its answers sent, together at the turn's end
/// (``HostServer/publishPending()``); a write that nothing else waits for is published at
/// once instead, the first of its turn only, so that a single writer's round trip does not
/// wait for the turn's bookkeeping. The flags that decide this live here, set and read
/// through the names of what happened, rather than in the server's other state.
///
/// A value, owned by the host's loop thread; no I/O.
struct HostTurn {
    /// Answers to the writes handled since the last publication, in order: each goes out
    /// with its batch, at the end of the turn at the latest (or after its group commit).
    private(set) var heldReplies: [PendingReply] = []
    /// Whether a batch whose answer already went out (or that is confirmed by echo) still
    /// has to be published.
    private(set) var publishDue = false
    /// Whether this turn already published a write at once.
    private(set) var publishedAtOnce = false
    /// Whether this turn handled a write (accepted, refused, or a copy): the loop then polls
    /// for a while instead of sleeping (``HostConfiguration/busyPollingAfterWrites``).
    private(set) var handledWrites = false

    /// Forgets what the previous turn did (its held replies and due batches stay until they
    /// are published).
    mutating func start() {
        publishedAtOnce = false
        handledWrites = false
    }

    /// A view's write reached the write path.
    mutating func noteWrite() { handledWrites = true }

    /// Whether a write just applied may be answered and published without waiting: nothing
    /// is held before it (its answer would overtake theirs).
    var mayAnswerAtOnce: Bool { heldReplies.isEmpty }

    /// A write was applied and answered (or is confirmed by its echo): its batch is due.
    /// - Returns: whether to publish now, which only the turn's first such write does; later
    ///   ones, a burst, share the turn's last publication.
    mutating func answeredAtOnce() -> Bool {
        publishDue = true
        guard !publishedAtOnce else { return false }
        publishedAtOnce = true
        return true
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
}
