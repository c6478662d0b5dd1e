import StateBusWire

/// A replica's view of one object: the host's confirmed values, the view's own writes that
/// the host has not confirmed yet, and what the view shows (the first with the second
/// applied on top, in write order).
///
/// A pure value type: the engine applies events to it under a lock, and each event returns
/// the names whose visible value changed, so observers hear about exactly those.
///
/// The rule for unacknowledged writes (proto/PROTOCOL.md, "Writes"): while a property has
/// pending writes, what the view shows is the host's value with those writes re-applied, so
/// a host value older than the view's own write never shows through (no flicker), while a
/// change to a sibling field of the same struct does.
struct ReplicaState: Sendable {
    struct PendingWrite: Sendable {
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

    private(set) var confirmed: [String: Value] = [:]
    private(set) var versions: [String: UInt64] = [:]
    /// What the view's pending writes make a property show, for the properties they touch
    /// and only while they are pending (`nil`: it shows nothing). Every other property shows
    /// its confirmed value, so the replica keeps one copy of the object's values, not two.
    private var overlay: [String: Value?] = [:]

    /// What the view shows: the confirmed values with its pending writes on top.
    var visible: [String: Value] {
        guard !overlay.isEmpty else { return confirmed }
        var shown = confirmed
        for (property, value) in overlay { shown[property] = value }
        return shown
    }

    /// What the view shows for one property.
    func visibleValue(of property: String) -> Value? {
        if let value = overlay[property] { return value }
        return confirmed[property]
    }
    private(set) var sequence: UInt64 = 0
    private(set) var epoch: UInt64 = 0
    private(set) var hasSnapshot = false
    /// The view's writes the host has not confirmed, in write order (ids ascending).
    private(set) var pending: [PendingWrite] = [] {
        didSet {
            if pending.isEmpty {
                queuedBytes = 0
                inFlight = 0
                nextUnsentID = 0
                acceptedQueue.removeAll(keepingCapacity: true)
                acceptedQueueStart = 0
            }
        }
    }
    /// What the pending writes cost, for ``ReplicaConfiguration/maxQueuedWriteBytes``.
    private(set) var queuedBytes = 0
    /// Pending writes sent and not answered: at most ``ReplicaConfiguration/maxWritesInFlight``.
    private(set) var inFlight = 0
    /// Every pending write with a smaller id has been taken by ``takeUnsent(limit:)`` since
    /// the connection was (re)built, so the next call starts here, not at the front.
    private var nextUnsentID: UInt64 = 0
    /// Pending writes the host accepted, by the sequence it applied them at (ascending, as
    /// answers come in host order), so an update confirms them without a scan of every
    /// pending write.
    private var acceptedQueue: [(sequence: UInt64, id: UInt64)] = []
    private var acceptedQueueStart = 0

    /// Where the pending write with this id is: pending ids ascend, so a binary search.
    private func indexOfPending(_ id: UInt64) -> Int? {
        var low = pending.startIndex
        var high = pending.endIndex
        while low < high {
            let middle = (low + high) / 2
            if pending[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low < pending.endIndex && pending[low].id == id ? low : nil
    }

    /// The view's own write, shown at once.
    /// - Parameters:
    ///   - deadline: when it fails with `timeout` unless answered (see ``expire(at:)``).
    ///   - bytes: what it costs, counted in ``queuedBytes``.
    mutating func localWrite(id: UInt64, changes: [PropertyChange], deadline: ContinuousClock.Instant? = nil, bytes: Int = 0) -> Set<String> {
        var write = PendingWrite(id: id, changes: changes)
        if let deadline { write.deadline = deadline }
        write.bytes = bytes
        pending.append(write)
        queuedBytes += bytes
        return recompute(Set(changes.map(\.property)))
    }

    /// Forgets the pending write at `index`, keeping the counters in step.
    private mutating func forgetPending(at index: Int) -> PendingWrite {
        let write = pending.remove(at: index)
        queuedBytes -= write.bytes
        if write.inFlight { inFlight -= 1 }
        return write
    }

    /// Fails every pending write whose deadline has passed: they disappear, as rejected
    /// ones do, and the view shows the host's values for what they touched.
    /// - Returns: the ids of the expired writes and the properties whose shown value changed.
    mutating func expire(at now: ContinuousClock.Instant) -> (expired: [UInt64], changed: Set<String>) {
        var expired: [UInt64] = []
        var touched = Set<String>()
        // Only writes nobody has answered expire; an accepted one waits for its echo.
        var index = pending.startIndex
        while index < pending.endIndex {
            if pending[index].deadline <= now, pending[index].acceptedSequence == nil {
                let write = forgetPending(at: index)
                expired.append(write.id)
                touched.formUnion(write.properties)
            } else {
                index += 1
            }
        }
        guard !expired.isEmpty else { return ([], []) }
        return (expired, recompute(touched))
    }

    /// A snapshot replaces the confirmed state.
    mutating func applySnapshot(epoch: UInt64, sequence: UInt64, values: [String: Value], versions: [String: UInt64]) -> Set<String> {
        if epoch != self.epoch {
            // A new host incarnation: accepted writes not yet seen died with the old state;
            // writes without an answer are sent again.
            pending.removeAll { $0.acceptedSequence != nil }
            acceptedQueue = []
            acceptedQueueStart = 0
            for index in pending.indices { pending[index].sent = false }
            queuedBytes = pending.reduce(0) { $0 + $1.bytes }
            inFlight = 0
            nextUnsentID = 0
        }
        self.epoch = epoch
        self.sequence = sequence
        hasSnapshot = true
        let previous = confirmed
        confirmed = values
        self.versions = versions
        let confirmedWrites = removeConfirmedWrites(upTo: sequence, origin: nil, writeID: nil)
        if pending.isEmpty && overlay.isEmpty {
            // Nothing of the view's own on top: what changed is what the snapshot changed.
            if previous.isEmpty { return Set(confirmed.keys) }  // the first join
            var changed = Set<String>()
            for (property, value) in confirmed where previous[property] != value { changed.insert(property) }
            for property in previous.keys where confirmed[property] == nil { changed.insert(property) }
            return changed
        }
        var touched = Set(previous.keys).union(confirmed.keys).union(confirmedWrites).union(overlay.keys)
        touched.formUnion(pending.flatMap(\.properties))
        var shownBefore: [String: Value?] = [:]
        for property in touched { shownBefore[property] = overlay[property] ?? previous[property] }
        return recompute(touched, shownBefore: shownBefore)
    }

    /// Applies one update batch at the next sequence number.
    /// - Parameter changed: receives the names whose visible value changed; a caller applying
    ///   many batches passes one set for all of them.
    mutating func applyBatch(
        sequence: UInt64, changes: [PropertyChange], origin: String, writeID: UInt64, myViewID: String,
        changed: inout Set<String>
    ) {
        if pending.isEmpty && overlay.isEmpty {
            // The common case, no writes of this view in flight: what the view shows is what
            // the host sent, so skip the recomputation (and its sets) entirely.
            for change in changes {
                let value: Value?
                if change.replacesWholeValue {
                    value = change.value
                } else {
                    value = confirmed[change.property].flatMap { try? change.applied(to: $0) }
                }
                versions[change.property] = sequence
                guard let value else { continue }
                if change.operation != .replace || change.path.components.first.map({ if case .id = $0 { true } else { false } }) == true {
                    // An element operation changes the collection: comparing a large collection
                    // with its previous value would cost time in its size.
                    confirmed[change.property] = value
                    changed.insert(change.property)
                } else if confirmed.updateValue(value, forKey: change.property) != value {
                    changed.insert(change.property)
                }
            }
            self.sequence = sequence
            return
        }
        changed.formUnion(applyBatchWithPendingWrites(sequence: sequence, changes: changes, origin: origin, writeID: writeID, myViewID: myViewID))
    }

    private mutating func applyBatchWithPendingWrites(sequence: UInt64, changes: [PropertyChange], origin: String, writeID: UInt64, myViewID: String)
        -> Set<String>
    {
        var shownBefore: [String: Value?] = [:]
        for change in changes where shownBefore[change.property] == nil { shownBefore[change.property] = .some(visibleValue(of: change.property)) }
        var touched = Set<String>()
        for change in changes {
            touched.insert(change.property)
            if change.replacesWholeValue {
                confirmed[change.property] = change.value
            } else if let current = confirmed[change.property], let updated = try? change.applied(to: current) {
                confirmed[change.property] = updated
            }
            versions[change.property] = sequence
        }
        self.sequence = sequence
        touched.formUnion(removeConfirmedWrites(upTo: sequence, origin: origin == myViewID ? origin : nil, writeID: writeID))
        return recompute(touched, shownBefore: shownBefore)
    }

    /// The host accepted a write at `sequence`.
    mutating func accept(writeID: UInt64, sequence: UInt64) -> Set<String> {
        guard let index = indexOfPending(writeID) else { return [] }
        if sequence <= self.sequence {
            // The echo is already applied: the confirmed state holds the write.
            return recompute(forgetPending(at: index).properties)
        }
        if pending[index].inFlight { inFlight -= 1 }
        pending[index].acceptedSequence = sequence
        let last = acceptedQueue.last?.sequence ?? 0
        acceptedQueue.append((sequence, writeID))
        // Answers to copies of writes (after a reconnect) can come out of order: keep it sorted.
        if sequence < last { acceptedQueue[acceptedQueueStart...].sort { $0.sequence < $1.sequence } }
        return []
    }

    /// The host rejected a write: it disappears and the view shows the host's value again.
    mutating func reject(writeID: UInt64) -> Set<String> {
        guard let index = indexOfPending(writeID) else { return [] }
        return recompute(forgetPending(at: index).properties)
    }

    /// Marks up to `limit` writes as sent, in write order; returns them.
    mutating func takeUnsent(limit: Int = .max) -> [PendingWrite] {
        var unsent: [PendingWrite] = []
        // Pending ids ascend, so a binary search finds where the last call stopped.
        var low = pending.startIndex
        var high = pending.endIndex
        while low < high {
            let middle = (low + high) / 2
            if pending[middle].id < nextUnsentID { low = middle + 1 } else { high = middle }
        }
        var index = low
        while index < pending.endIndex, unsent.count < limit {
            if !pending[index].sent {
                pending[index].sent = true
                if pending[index].inFlight { inFlight += 1 }
                unsent.append(pending[index])
            }
            nextUnsentID = pending[index].id + 1
            index += 1
        }
        return unsent
    }

    /// Whether some write waits to be sent: action calls wait behind it, so a call never
    /// overtakes a write made before it. (Every pending write below `nextUnsentID` is sent.)
    var hasUnsentWrites: Bool {
        guard let last = pending.last else { return false }
        return last.id >= nextUnsentID
    }

    /// Marks one write unsent again: the socket would not take it now.
    mutating func markUnsent(_ writeID: UInt64) {
        guard let index = indexOfPending(writeID), pending[index].inFlight else { return }
        pending[index].sent = false
        inFlight -= 1
        nextUnsentID = min(nextUnsentID, writeID)
    }

    /// Forgets that writes were sent (the connection is being rebuilt).
    mutating func markAllUnsent() {
        for index in pending.indices where pending[index].acceptedSequence == nil { pending[index].sent = false }
        inFlight = 0
        nextUnsentID = 0
    }

    /// Removes the view's write the batch echoes (when `origin` is this view's) and every
    /// accepted write the state now holds (accepted at `sequence` or before).
    private mutating func removeConfirmedWrites(upTo sequence: UInt64, origin: String?, writeID: UInt64?) -> Set<String> {
        var touched = Set<String>()
        if origin != nil, let writeID, let index = indexOfPending(writeID) {
            touched.formUnion(forgetPending(at: index).properties)
        }
        while acceptedQueueStart < acceptedQueue.count, acceptedQueue[acceptedQueueStart].sequence <= sequence {
            let id = acceptedQueue[acceptedQueueStart].id
            acceptedQueueStart += 1
            // The write's own accepted sequence decides: a second answer (to a copy) may
            // have moved it past this entry's.
            if let index = indexOfPending(id), let accepted = pending[index].acceptedSequence, accepted <= sequence {
                touched.formUnion(forgetPending(at: index).properties)
            }
        }
        if acceptedQueueStart > 1024, acceptedQueueStart * 2 > acceptedQueue.count {
            acceptedQueue.removeFirst(acceptedQueueStart)
            acceptedQueueStart = 0
        }
        return touched
    }

    /// Recomputes what `properties` show, with the view's pending writes on top.
    /// - Parameter shownBefore: what they showed before this event, recorded by an event that
    ///   changed confirmed values first; otherwise what they show now is the "before".
    /// - Returns: the properties whose shown value changed.
    private mutating func recompute(_ properties: Set<String>, shownBefore: [String: Value?]? = nil) -> Set<String> {
        var changed = Set<String>()
        for property in properties {
            let before: Value?
            if let recorded = shownBefore?[property] { before = recorded } else { before = visibleValue(of: property) }
            // Only the writes from the newest one that sets the whole property onwards matter:
            // found from the end, so a burst of writes to one property costs O(1) each, not
            // a scan of every pending write.
            var start = pending.startIndex
            var written = false
            for index in pending.indices.reversed() where pending[index].changes.contains(where: { $0.property == property }) {
                written = true
                if pending[index].changes.contains(where: { $0.property == property && $0.replacesWholeValue }) {
                    start = index
                    break
                }
            }
            var value = confirmed[property]
            for write in pending[start...] {
                for change in write.changes where change.property == property {
                    if change.replacesWholeValue {
                        value = change.value
                    } else if let current = value, let updated = try? change.applied(to: current) {
                        value = updated
                    }
                }
            }
            if written { overlay[property] = .some(value) } else { overlay.removeValue(forKey: property) }
            if before != value { changed.insert(property) }
        }
        return changed
    }
}
