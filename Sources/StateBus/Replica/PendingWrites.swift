/// A view's writes the host has not confirmed, in write order (ids ascending), and the
/// bookkeeping of sending them: what they cost, how many are in flight, where sending
/// stopped, and the accepted ones by the sequence the host applied them at.
///
/// What the writes make the view show is ``ReplicaState``'s; this is the queue alone, so that
/// its counters are kept in step in one place.
struct PendingWrites: Sendable {
    struct Write: Sendable {
        let id: UInt64
        let changes: [PropertyChange]
        /// When the write fails with `timeout` if the host has not answered it.
        var deadline: ContinuousClock.Instant = .now + .seconds(3600 * 24 * 365)
        /// Roughly what the write costs in memory, for the queue's bound in bytes.
        var bytes = 0
        /// Sent to the current host incarnation.
        var sent = false
        /// The sequence the host applied it at, once accepted.
        var acceptedSequence: UInt64?
        var properties: Set<String> { Set(changes.map(\.property)) }
        /// Sent and not answered yet: it counts against the window of writes in flight.
        var inFlight: Bool { sent && acceptedSequence == nil }
    }

    /// The writes, in write order.
    private(set) var all: [Write] = [] {
        didSet {
            if all.isEmpty {
                queuedBytes = 0
                inFlight = 0
                nextUnsentID = 0
                acceptedQueue.removeAll(keepingCapacity: true)
                acceptedQueueStart = 0
            }
        }
    }
    /// What the writes cost, for ``ReplicaConfiguration/maxQueuedWriteBytes``.
    private(set) var queuedBytes = 0
    /// Writes sent and not answered: at most ``ReplicaConfiguration/maxWritesInFlight``.
    private(set) var inFlight = 0
    /// Every write with a smaller id has been taken by ``takeUnsent(limit:)`` since the
    /// connection was (re)built, so the next call starts here, not at the front.
    private var nextUnsentID: UInt64 = 0
    /// Writes the host accepted, by the sequence it applied them at (ascending, as answers
    /// come in host order), so an update confirms them without a scan of every write.
    private var acceptedQueue: [(sequence: UInt64, id: UInt64)] = []
    private var acceptedQueueStart = 0

    var isEmpty: Bool { all.isEmpty }

    /// Where the write with this id is: ids ascend, so a binary search.
    func index(of id: UInt64) -> Int? {
        let low = firstIndex(notBelow: id)
        return low < all.endIndex && all[low].id == id ? low : nil
    }

    /// The index of the first write whose id is `id` or more.
    private func firstIndex(notBelow id: UInt64) -> Int {
        var low = all.startIndex
        var high = all.endIndex
        while low < high {
            let middle = (low + high) / 2
            if all[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Queues a new write (its id above every other's).
    mutating func append(_ write: Write) {
        all.append(write)
        queuedBytes += write.bytes
    }

    /// Forgets the write at `index`, keeping the counters in step.
    mutating func remove(at index: Int) -> Write {
        // Counted down before the removal: removing the last write resets both counts
        // (`all`'s observer), and counting down after it left them at -1 and minus the
        // write's size (a write whose echo came before its answer).
        if all[index].inFlight { inFlight -= 1 }
        queuedBytes -= all[index].bytes
        return all.remove(at: index)
    }

    /// Removes the writes nobody answered whose deadline passed (an accepted one waits for
    /// its echo). - Returns: them.
    mutating func removeExpired(at now: ContinuousClock.Instant) -> [Write] {
        var expired: [Write] = []
        var index = all.startIndex
        while index < all.endIndex {
            if all[index].deadline <= now, all[index].acceptedSequence == nil {
                expired.append(remove(at: index))
            } else {
                index += 1
            }
        }
        return expired
    }

    /// A new host incarnation: accepted writes not yet seen died with the old state; writes
    /// without an answer are to be sent again.
    mutating func newHostRun() {
        all.removeAll { $0.acceptedSequence != nil }
        acceptedQueue = []
        acceptedQueueStart = 0
        for index in all.indices { all[index].sent = false }
        queuedBytes = all.reduce(0) { $0 + $1.bytes }
        inFlight = 0
        nextUnsentID = 0
    }

    /// The host accepted the write at `index` at `sequence` (later than the view's state):
    /// it waits for its echo.
    mutating func accept(at index: Int, sequence: UInt64) {
        if all[index].inFlight { inFlight -= 1 }
        all[index].acceptedSequence = sequence
        let last = acceptedQueue.last?.sequence ?? 0
        acceptedQueue.append((sequence, all[index].id))
        // Answers to copies of writes (after a reconnect) can come out of order: keep it sorted.
        if sequence < last { acceptedQueue[acceptedQueueStart...].sort { $0.sequence < $1.sequence } }
    }

    /// Removes the write `echoed` (a batch's echo of this view's write, when given) and every
    /// accepted write the view's state now holds (accepted at `sequence` or before).
    /// - Returns: the properties they wrote.
    mutating func removeConfirmed(upTo sequence: UInt64, echoed: UInt64?) -> Set<String> {
        var touched = Set<String>()
        if let echoed, let index = index(of: echoed) {
            touched.formUnion(remove(at: index).properties)
        }
        while acceptedQueueStart < acceptedQueue.count, acceptedQueue[acceptedQueueStart].sequence <= sequence {
            let id = acceptedQueue[acceptedQueueStart].id
            acceptedQueueStart += 1
            // The write's own accepted sequence decides: a second answer (to a copy) may
            // have moved it past this entry's.
            if let index = index(of: id), let accepted = all[index].acceptedSequence, accepted <= sequence {
                touched.formUnion(remove(at: index).properties)
            }
        }
        if acceptedQueueStart > 1024, acceptedQueueStart * 2 > acceptedQueue.count {
            acceptedQueue.removeFirst(acceptedQueueStart)
            acceptedQueueStart = 0
        }
        return touched
    }

    // MARK: Sending

    /// Marks up to `limit` writes as sent, in write order; returns them.
    mutating func takeUnsent(limit: Int = .max) -> [Write] {
        var unsent: [Write] = []
        // Ids ascend, so a binary search finds where the last call stopped.
        var index = firstIndex(notBelow: nextUnsentID)
        while index < all.endIndex, unsent.count < limit {
            if !all[index].sent {
                all[index].sent = true
                if all[index].inFlight { inFlight += 1 }
                unsent.append(all[index])
            }
            nextUnsentID = all[index].id + 1
            index += 1
        }
        return unsent
    }

    /// Whether some write waits to be sent. (Every write below `nextUnsentID` is sent.)
    var hasUnsent: Bool {
        guard let last = all.last else { return false }
        return last.id >= nextUnsentID
    }

    /// Marks one write unsent again: the socket would not take it now.
    mutating func markUnsent(_ writeID: UInt64) {
        guard let index = index(of: writeID), all[index].inFlight else { return }
        all[index].sent = false
        inFlight -= 1
        nextUnsentID = min(nextUnsentID, writeID)
    }

    /// Forgets that writes were sent (the connection is being rebuilt).
    mutating func markAllUnsent() {
        for index in all.indices where all[index].acceptedSequence == nil { all[index].sent = false }
        inFlight = 0
        nextUnsentID = 0
    }
}
