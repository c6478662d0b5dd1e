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
/// sends different changes and is not mistaken for a copy. The ledger keeps the last
/// ``answersPerView`` answers of each view and forgets the least recently active views
/// beyond ``maximumViews``; a copy older than that is applied again, as before the ledger.
///
/// Owned by the host's I/O loop thread; not thread-safe.
struct WriteLedger {
    /// What the host answered a write, and whether that answer waited for a commit.
    struct Answer {
        var reply: Statebus_V1_WriteReply
        var durable: Bool
        /// The write's changes, to tell a copy from a different write with the same id
        /// (kept as received: no work on the write path beyond a retain).
        let changes: [Statebus_V1_Change]
        let object: String
    }

    /// Answers kept per view: far more than a view has in flight.
    static let answersPerView = 1024
    /// Views remembered at once.
    static let maximumViews = 10_000

    private struct ViewWrites {
        var answers: [UInt64: Answer] = [:]
        var lastActive: UInt64 = 0
    }

    private var views: [String: ViewWrites] = [:]
    private var activity: UInt64 = 0

    /// The answer given to this very write before, if `write` is a copy of it.
    func answer(to write: Statebus_V1_WriteRequest) -> Answer? {
        guard let answer = views[write.viewID]?.answers[write.writeID], answer.object == write.object, answer.changes == write.changes else { return nil }
        return answer
    }

    /// Records the answer given to a write.
    mutating func record(view: String, writeID: UInt64, answer: Answer) {
        activity += 1
        views[view, default: ViewWrites()].answers[writeID] = answer
        views[view]!.lastActive = activity
        if views[view]!.answers.count > 2 * Self.answersPerView {
            // Write ids grow, so the oldest answers have the smallest ids.
            let keep = Set(views[view]!.answers.keys.sorted().suffix(Self.answersPerView))
            views[view]!.answers = views[view]!.answers.filter { keep.contains($0.key) }
        }
        if views.count > Self.maximumViews + Self.maximumViews / 10 {
            let keep = Set(views.sorted { $0.value.lastActive > $1.value.lastActive }.prefix(Self.maximumViews).map(\.key))
            views = views.filter { keep.contains($0.key) }
        }
    }

    /// Replaces a recorded answer (a commit failed after the write was accepted).
    mutating func update(view: String, writeID: UInt64, reply: Statebus_V1_WriteReply) {
        views[view]?.answers[writeID]?.reply = reply
    }
}
