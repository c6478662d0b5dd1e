import StateBusWire

/// The host's memory of each view's recent writes and the answers it gave them, so that a
/// write sent again is answered again instead of being applied twice.
///
/// A view sends its unanswered writes again when it reconnects to the same host (its
/// connection dropped, or the host went quiet and came back): the first copy may have been
/// applied and only its answer lost. Applying the copy again would put back a value that a
/// later write, perhaps another view's acknowledged one, had replaced. So the host answers
/// the copy with the first copy's answer, and changes nothing.
///
/// A write counts as a copy only when its view id, write id and changes all match one
/// recorded here: a process that reuses a view id after a restart (its write ids start over)
/// sends different changes and is not mistaken for a copy. The changes are kept as a digest
/// (``WriteDigest``), never as values, so what a client writes does not stay in the host's
/// memory. The answers to durable writes are also stored with their values (``StoredAnswer``)
/// and come back here when a host starts, so a copy sent to the next host is not applied
/// twice either. The ledger keeps exactly the last ``answersPerView`` answers of each view
/// (by write id), the ``maximumViews`` most recently active views, and at most
/// ``maximumBytes`` of answers in all, each bound evicting its oldest first, one at a time;
/// a copy older than that is applied again, as before the ledger.
///
/// Owned by the host's I/O loop thread; not thread-safe.
struct WriteLedger {
    /// What the host answered a write, and whether that answer waited for a commit.
    struct Answer: Equatable {
        /// The verdict: accepted at a sequence, or refused.
        var verdict: WriteVerdict
        var durable: Bool
        /// A digest of the write's object and changes (``WriteDigest``), to tell a copy
        /// from a different write with the same id.
        let digest: UInt64

        /// Records an answer to a write of `changes` to `object`.
        init(verdict: WriteVerdict, durable: Bool, changes: [PropertyChange], object: String) {
            self.init(verdict: verdict, durable: durable, digest: WriteDigest.of(object: object, changes: changes))
        }

        /// Records an answer whose digest is known (read back from the database).
        init(verdict: WriteVerdict, durable: Bool, digest: UInt64) {
            self.verdict = verdict
            self.durable = durable
            self.digest = digest
        }

        /// What the answer costs in memory: its fixed part and the refusal's text.
        var bytes: Int {
            guard case .failure(let error) = verdict else { return 96 }
            return 96 + error.message.utf8.count + (error.object?.utf8.count ?? 0) + (error.property?.utf8.count ?? 0)
        }
    }

    /// Answers kept per view: far more than a view has in flight. Past it, the view's
    /// smallest write id is forgotten, one at a time.
    static let answersPerView = 1024
    /// Views remembered at once; past it, the least recently active view is forgotten.
    static let maximumViews = 10_000
    /// Answers held in all, in bytes (about 300,000 short answers).
    static let maximumBytes = 32 << 20

    private struct ViewWrites {
        var answers = ViewAnswers<Answer>()
        var lastActive: UInt64 = 0
    }

    private var views: [String: ViewWrites] = [:]
    private var activity: UInt64 = 0
    /// Views in order of activity, oldest first, each entry stamped with the activity it
    /// records; an entry whose view has been active since is skipped when it comes up.
    private var activityOrder: [(view: String, stamp: UInt64)] = []
    private var activityStart = 0
    /// Every recorded answer in recording order, for evicting the oldest; entries whose
    /// answer was already forgotten are skipped when they come up.
    private var order: [(view: String, writeID: UInt64)] = []
    private var orderStart = 0
    /// What the remembered answers cost.
    private(set) var bytes = 0
    /// Answers remembered.
    private(set) var count = 0

    /// The answer given to this very write before, if a write of `digest` from `view` with
    /// `writeID` is a copy of it (the same view, write id, object and changes).
    /// - Parameter digest: the write's ``WriteDigest``, computed only when the view has an
    ///   answer recorded for `writeID` (the host's write path computes it as late as it can).
    func answer(toCopyFrom view: String, writeID: UInt64, digest: @autoclosure () -> UInt64) -> Answer? {
        guard let answer = views[view]?.answers[writeID], answer.digest == digest() else { return nil }
        return answer
    }

    /// Records the answer given to a write; forgets the view's oldest answer past
    /// ``answersPerView``, the least recently active view past ``maximumViews``, and the
    /// oldest answers past ``maximumBytes``.
    mutating func record(view: String, writeID: UInt64, answer: Answer) {
        activity += 1
        let (replaced, evicted) = views[view, default: ViewWrites()].answers.record(answer, writeID: writeID, limit: Self.answersPerView)
        if let replaced { forgetCost(of: replaced) }
        if let evicted { forgetCost(of: evicted) }
        bytes += answer.bytes
        count += 1
        order.append((view, writeID))
        views[view]!.lastActive = activity
        activityOrder.append((view, activity))
        forgetInactiveViews()
        evictOldest()
    }

    private mutating func forgetCost(of answer: Answer) {
        bytes -= answer.bytes
        count -= 1
    }

    /// Forgets the least recently active views while more than ``maximumViews`` are
    /// remembered, and drops stale entries from the activity order once they outnumber the
    /// views.
    private mutating func forgetInactiveViews() {
        while views.count > Self.maximumViews, activityStart < activityOrder.count {
            let (view, stamp) = activityOrder[activityStart]
            activityStart += 1
            guard let writes = views[view], writes.lastActive == stamp else { continue }
            for answer in writes.answers.answers.values { forgetCost(of: answer) }
            views[view] = nil
        }
        if activityOrder.count - activityStart > 2 * views.count + 1024 || activityStart > activityOrder.count / 2 {
            activityOrder = activityOrder[activityStart...].filter { views[$0.view]?.lastActive == $0.stamp }
            activityStart = 0
        }
    }

    /// Forgets the oldest answers while the ledger holds more than ``maximumBytes``, and
    /// drops forgotten entries from the recording order once they outnumber the live ones.
    private mutating func evictOldest() {
        while bytes > Self.maximumBytes, orderStart < order.count {
            let (view, writeID) = order[orderStart]
            orderStart += 1
            guard let answer = views[view]?.answers.remove(writeID: writeID) else { continue }
            forgetCost(of: answer)
            if views[view]?.answers.count == 0 { views[view] = nil }
        }
        if order.count - orderStart > 2 * count + 1024 || orderStart > order.count / 2 {
            order = order[orderStart...].filter { views[$0.view]?.answers[$0.writeID] != nil }
            orderStart = 0
        }
    }

    /// The answer recorded for a view's write, whatever its changes.
    func answer(view: String, writeID: UInt64) -> Answer? { views[view]?.answers[writeID] }

    /// Replaces a recorded answer (a commit failed after the write was accepted).
    mutating func update(view: String, writeID: UInt64, verdict: WriteVerdict) {
        views[view]?.answers.update(writeID: writeID) { $0.verdict = verdict }
    }
}
