/// One view's recorded write answers in the ``WriteLedger``: at most a bound of them, the
/// smallest write id evicted first, one at a time.
///
/// A view's write ids grow, so its answers arrive in write-id order and the oldest is the
/// front of a queue: recording and evicting cost O(1). An id below the newest (a view that
/// restarted and counts again from an earlier id) is placed in order, which costs a search.
///
/// Owned by the host's I/O loop thread, as the ledger is; not thread-safe.
struct ViewAnswers<Answer> {
    /// The answers by write id.
    private(set) var answers: [UInt64: Answer] = [:]
    /// Write ids in ascending order from `start`; an id whose answer was forgotten elsewhere
    /// (the ledger's byte bound) may stay until it reaches the front.
    private var ids: [UInt64] = []
    private var start = 0

    /// How many answers are recorded.
    var count: Int { answers.count }

    /// The answer recorded for a write id.
    subscript(writeID: UInt64) -> Answer? { answers[writeID] }

    /// Records an answer, then evicts the answer of the smallest write id if more than
    /// `limit` are recorded (one record adds at most one answer, so one eviction restores the
    /// bound).
    /// - Returns: the answer this one replaced (the same write id recorded before), and the
    ///   answer evicted, for the ledger's byte count.
    mutating func record(_ answer: Answer, writeID: UInt64, limit: Int) -> (replaced: Answer?, evicted: Answer?) {
        let replaced = answers.updateValue(answer, forKey: writeID)
        if replaced == nil {
            if start == ids.count || writeID > ids[ids.count - 1] {
                ids.append(writeID)
            } else {
                ids.insert(writeID, at: insertionIndex(of: writeID))
            }
        }
        var evicted: Answer?
        while answers.count > limit, evicted == nil, start < ids.count {
            let oldest = ids[start]
            start += 1
            evicted = answers.removeValue(forKey: oldest)
        }
        compactIfSparse()
        return (replaced, evicted)
    }

    /// Forgets one answer (the ledger's byte bound evicts across views).
    mutating func remove(writeID: UInt64) -> Answer? {
        guard let answer = answers.removeValue(forKey: writeID) else { return nil }
        if start < ids.count, ids[start] == writeID { start += 1 }
        compactIfSparse()
        return answer
    }

    /// Replaces the answer of a recorded write id; nothing when it is not recorded.
    mutating func update(writeID: UInt64, _ change: (inout Answer) -> Void) {
        guard var answer = answers[writeID] else { return }
        change(&answer)
        answers[writeID] = answer
    }

    /// The first index at or after `start` whose id is not below `writeID`.
    private func insertionIndex(of writeID: UInt64) -> Int {
        var low = start
        var high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] < writeID { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Drops the consumed front and the ids of forgotten answers once they outnumber the
    /// live ones, so the queue stays within a small multiple of the answers it orders.
    private mutating func compactIfSparse() {
        let queued = ids.count - start
        guard start > 64 && start > ids.count / 2 || queued > 2 * answers.count + 64 else { return }
        ids = ids[start...].filter { answers[$0] != nil }
        start = 0
    }
}
