import StateBusWire

/// A replica's view of one object: the host's confirmed values, the view's own writes that
/// the host has not confirmed yet, and what the view shows (the first with the second
/// applied on top, in write order).
///
/// A pure value type: the engine applies events to it under a lock, and each event returns
/// the names whose visible value changed, so observers hear about exactly those. Confirmed
/// values and versions are arrays by property index (the welcome's order): the host's updates
/// apply without a name lookup. The view's own pending writes stay by name: they may be made
/// before the replica knows the object's schema.
///
/// The rule for unacknowledged writes (proto/PROTOCOL.md, "Writes"): while a property has
/// pending writes, what the view shows is the host's value with those writes re-applied, so
/// a host value older than the view's own write never shows through (no flicker), while a
/// change to a sibling field of the same struct does.
struct ReplicaState: Sendable {
    typealias PendingWrite = PendingWrites.Write

    /// What a snapshot changed: everything (the first one), or these names.
    enum SnapshotChanges: Equatable {
        case all
        case some(Set<String>)
    }

    /// The object's properties, from the last snapshot's welcome.
    private(set) var layout = PropertyLayout(names: [], kinds: [])
    /// The host's values and versions, by index (empty before the first snapshot).
    private(set) var confirmed: [Value] = []
    private(set) var versions: [UInt64] = []
    /// Where the elements of keyed collections in `confirmed` sit, by property index: kept
    /// by the element operations applied in place (``applyPlain(_:sequence:tracker:)``),
    /// dropped by any other change of the property.
    private var elementPositions: [Int: ElementPositions] = [:]
    /// What the view's pending writes make a property show, for the properties they touch
    /// and only while they are pending (`nil`: it shows nothing). Every other property shows
    /// its confirmed value, so the replica keeps one copy of the object's values, not two.
    private var overlay: [String: Value?] = [:]
    /// The shown values' changes, for a follower to repeat, while one follows (``follow()``).
    private var journal: ElementJournal?

    private(set) var sequence: UInt64 = 0
    private(set) var epoch: UInt64 = 0
    private(set) var hasSnapshot = false
    /// The view's writes the host has not confirmed, and the bookkeeping of sending them.
    private var writes = PendingWrites()
    /// The view's writes the host has not confirmed, in write order (ids ascending).
    var pending: [PendingWrite] { writes.all }
    /// What the pending writes cost, for ``ReplicaConfiguration/maxQueuedWriteBytes``.
    var queuedBytes: Int { writes.queuedBytes }
    /// Pending writes sent and not answered: at most ``ReplicaConfiguration/maxWritesInFlight``.
    var inFlight: Int { writes.inFlight }

    // MARK: Reading

    /// What the view shows: the confirmed values with its pending writes on top.
    var visible: [String: Value] {
        var shown: [String: Value] = [:]
        shown.reserveCapacity(confirmed.count + overlay.count)
        for (index, value) in confirmed.enumerated() { shown[layout.names[index]] = value }
        for (property, value) in overlay { shown[property] = value }
        return shown
    }

    /// The host's value of one property.
    mutating func confirmedValue(of property: String) -> Value? {
        guard let index = layout.index(of: property), index < confirmed.count else { return nil }
        return confirmed[index]
    }

    /// What the view shows for one property.
    mutating func visibleValue(of property: String) -> Value? {
        if let value = overlay[property] { return value }
        return confirmedValue(of: property)
    }

    /// The sequence at which a property last changed.
    mutating func version(of property: String) -> UInt64? {
        guard let index = layout.index(of: property), index < versions.count else { return nil }
        return versions[index]
    }

    // MARK: A follower

    /// Starts keeping the shown values' changes for a follower (a model's bus), from now.
    /// - Returns: the shown values now: the follower's starting point.
    mutating func follow() -> [String: Value] {
        journal = ElementJournal()
        return visible
    }

    /// What changed since ``follow()`` or the last call: the element edits to repeat, and the
    /// shown values of the properties that changed any other way (absent: no longer shown).
    /// - Parameter whole: properties the follower could not repeat edits on: their shown
    ///   values come whole too, and none of their edits.
    mutating func takeFollowed(whole: Set<String> = []) -> (edits: [String: [ElementEdit]], values: [String: Value]) {
        guard let taken = journal?.take() else { return ([:], [:]) }
        return taken.handedOver(whole: whole) { visibleValue(of: $0) }
    }

    /// Stops keeping the shown values' changes.
    mutating func unfollow() { journal = nil }

    /// Notes that the follower changed these properties itself, or tried to: it is given
    /// their shown values whole, not edits made before to a list it no longer holds.
    mutating func followerChanged(_ names: some Sequence<String>) {
        journal?.replaced(names)
    }

    /// Notes for the follower that `names` changed some way other than an element edit.
    private mutating func noted(_ names: Set<String>) -> Set<String> {
        journal?.replaced(names)
        return names
    }

    /// Whether no pending write shows: the host's updates then apply straight to the arrays
    /// (``applyPlain(_:sequence:tracker:)``).
    var isPlain: Bool { writes.isEmpty && overlay.isEmpty }

    // MARK: The view's writes

    /// The view's own write, shown at once.
    /// - Parameters:
    ///   - deadline: when it fails with `timeout` unless answered (see ``expire(at:)``).
    ///   - bytes: what it costs, counted in ``queuedBytes``.
    mutating func localWrite(id: UInt64, changes: [PropertyChange], deadline: ContinuousClock.Instant? = nil, bytes: Int = 0) -> Set<String> {
        var write = PendingWrite(id: id, changes: changes)
        if let deadline { write.deadline = deadline }
        write.bytes = bytes
        writes.append(write)
        let written = Set(changes.map(\.property))
        // Every written property, shown differently or not: the follower (the model that
        // wrote it) holds its own value, not the edits that came before.
        followerChanged(written)
        var changed = Set<String>()
        for property in written {
            // Shown with the earlier pending writes on top already: this one goes on top of
            // that, instead of all of them again on the confirmed value (a burst of edits to
            // a large list would walk and copy it once per pending write, for each write).
            guard case .some(.some(let shown)) = overlay[property] else {
                changed.formUnion(recompute([property]))
                continue
            }
            var value: Value? = shown
            for change in changes where change.property == property {
                if change.replacesWholeValue {
                    value = change.value
                } else if let current = value, let updated = try? change.applied(to: current) {
                    value = updated
                }
            }
            overlay[property] = .some(value)
            if value != shown { changed.insert(property) }
        }
        return changed
    }

    /// Fails every pending write whose deadline has passed: they disappear, as rejected
    /// ones do, and the view shows the host's values for what they touched.
    /// - Returns: the ids of the expired writes and the properties whose shown value changed.
    mutating func expire(at now: ContinuousClock.Instant) -> (expired: [UInt64], changed: Set<String>) {
        // Only writes nobody has answered expire; an accepted one waits for its echo.
        let expired = writes.removeExpired(at: now)
        guard !expired.isEmpty else { return ([], []) }
        return (expired.map(\.id), noted(recompute(expired.reduce(into: Set<String>()) { $0.formUnion($1.properties) })))
    }

    // MARK: The host's state

    /// A snapshot replaces the confirmed state (and the layout, which a restarted host may
    /// have changed).
    mutating func applySnapshot(epoch: UInt64, sequence: UInt64, layout: PropertyLayout, values: [Value], versions: [UInt64]) -> SnapshotChanges {
        if epoch != self.epoch {
            // A new host incarnation: accepted writes not yet seen died with the old state;
            // writes without an answer are sent again.
            writes.newHostRun()
        }
        self.epoch = epoch
        self.sequence = sequence
        let first = !hasSnapshot
        hasSnapshot = true
        let previousLayout = self.layout
        let previous = confirmed
        self.layout = layout
        confirmed = values
        elementPositions.removeAll()
        self.versions = versions
        let confirmedWrites = removeConfirmedWrites(upTo: sequence, origin: nil, writeID: nil)
        if writes.isEmpty && overlay.isEmpty {
            // Nothing of the view's own on top: what changed is what the snapshot changed.
            if first {
                // No set of every name unless followed: a join of 100,000 properties would
                // hold one for nothing.
                journal?.replaced(layout.names)
                return .all
            }
            var changed = Set<String>()
            if previousLayout == layout {
                for index in confirmed.indices where previous[index] != confirmed[index] { changed.insert(layout.names[index]) }
            } else {
                let before = Dictionary(zip(previousLayout.names, previous), uniquingKeysWith: { first, _ in first })
                for (index, name) in layout.names.enumerated() where before[name] != confirmed[index] { changed.insert(name) }
                for name in previousLayout.names where self.layout.index(of: name) == nil { changed.insert(name) }
            }
            return .some(noted(changed))
        }
        var touched = Set(previousLayout.names).union(layout.names).union(confirmedWrites).union(overlay.keys)
        touched.formUnion(pending.flatMap(\.properties))
        let before = Dictionary(zip(previousLayout.names, previous), uniquingKeysWith: { first, _ in first })
        var shownBefore: [String: Value?] = [:]
        for property in touched { shownBefore[property] = overlay[property] ?? before[property] }
        return .some(noted(recompute(touched, shownBefore: shownBefore)))
    }

    /// Applies one change of a batch while no pending write shows (``isPlain``): straight
    /// into the arrays. Call ``finishPlainBatch(sequence:)`` after the batch's last change.
    /// - Parameter tracker: collects changed indexes, when someone observes names.
    /// - Returns: `false` when the change names a property the object does not have.
    @inline(__always)
    mutating func applyPlain(_ change: IndexedChange, sequence: UInt64, tracker: inout ChangeTracker?) -> Bool {
        let index = change.property
        guard index < confirmed.count else { return false }
        versions[index] = sequence
        guard change.replacesWholeValue else {
            let elementOperation =
                change.operation != .replace || change.path.components.first.map { if case .id = $0 { true } else { false } } == true
            // The positions of the property's elements go with any change but one made through
            // them; a failed change leaves the list, and so its positions, as they were.
            var positions = elementPositions.removeValue(forKey: index)
            if elementOperation,
                let edit = confirmed[index].applyElementOperation(
                    change.operation, change.value, at: change.path, position: change.position, positions: &positions)
            {
                // Found through the positions and changed where it is: the cost of a change
                // to one element of a large collection is the element's, not the collection's.
                elementPositions[index] = positions
                tracker?.insert(index)
                journal?.record(edit, of: layout.names[index])
                return true
            }
            guard let updated = try? confirmed[index].applying(change.operation, change.value, at: change.path, position: change.position) else {
                elementPositions[index] = positions
                return true
            }
            if elementOperation || tracker == nil {
                // An element operation is not compared with the previous value: for a large
                // collection that costs time in its size, and it changes the list anyway.
                confirmed[index] = updated
                tracker?.insert(index)
            } else if confirmed[index] != updated {
                confirmed[index] = updated
                tracker!.insert(index)
            }
            journal?.replaced(layout.names[index])
            return true
        }
        if !elementPositions.isEmpty { elementPositions[index] = nil }
        journal?.replaced(layout.names[index])
        if tracker != nil {
            if confirmed[index] != change.value {
                confirmed[index] = change.value
                tracker!.insert(index)
            }
        } else {
            confirmed[index] = change.value
        }
        return true
    }

    /// Ends a batch applied with ``applyPlain(_:sequence:tracker:)``.
    mutating func finishPlainBatch(sequence: UInt64) {
        self.sequence = sequence
    }

    /// Applies one update batch at the next sequence number, with the view's pending writes
    /// on top (the general path; ``applyPlain(_:sequence:tracker:)`` is the fast one).
    /// - Parameter changed: receives the names whose visible value changed.
    /// - Returns: `false` when a change names a property the object does not have.
    mutating func applyBatch(
        sequence: UInt64, changes: [IndexedChange], origin: String?, writeID: UInt64, myViewID: String, changed: inout Set<String>
    ) -> Bool {
        guard changes.allSatisfy({ $0.property < confirmed.count }) else { return false }
        var shownBefore: [String: Value?] = [:]
        for change in changes {
            let name = layout.names[change.property]
            if shownBefore[name] == nil { shownBefore[name] = .some(overlay[name] ?? confirmed[change.property]) }
        }
        var touched = Set<String>()
        for change in changes {
            touched.insert(layout.names[change.property])
            if !elementPositions.isEmpty { elementPositions[change.property] = nil }
            if change.replacesWholeValue {
                confirmed[change.property] = change.value
            } else if let updated = try? confirmed[change.property].applying(
                change.operation, change.value, at: change.path, position: change.position)
            {
                confirmed[change.property] = updated
            }
            versions[change.property] = sequence
        }
        self.sequence = sequence
        touched.formUnion(removeConfirmedWrites(upTo: sequence, origin: origin == myViewID ? origin : nil, writeID: writeID))
        changed.formUnion(noted(recompute(touched, shownBefore: shownBefore)))
        return true
    }

    /// The host accepted a write at `sequence`.
    mutating func accept(writeID: UInt64, sequence: UInt64) -> Set<String> {
        guard let index = writes.index(of: writeID) else { return [] }
        if sequence <= self.sequence {
            // The echo is already applied: the confirmed state holds the write.
            return noted(recompute(writes.remove(at: index).properties))
        }
        writes.accept(at: index, sequence: sequence)
        return []
    }

    /// The host rejected a write: it disappears and the view shows the host's value again.
    mutating func reject(writeID: UInt64) -> Set<String> {
        guard let index = writes.index(of: writeID) else { return [] }
        return noted(recompute(writes.remove(at: index).properties))
    }

    // MARK: Sending

    /// Marks up to `limit` writes as sent, in write order; returns them.
    mutating func takeUnsent(limit: Int = .max) -> [PendingWrite] { writes.takeUnsent(limit: limit) }

    /// Whether some write waits to be sent: action calls wait behind it, so a call never
    /// overtakes a write made before it.
    var hasUnsentWrites: Bool { writes.hasUnsent }

    /// Marks one write unsent again: the socket would not take it now.
    mutating func markUnsent(_ writeID: UInt64) { writes.markUnsent(writeID) }

    /// Forgets that writes were sent (the connection is being rebuilt).
    mutating func markAllUnsent() { writes.markAllUnsent() }

    // MARK: The overlay

    /// Removes the view's write the batch echoes (when `origin` is this view's) and every
    /// accepted write the state now holds (accepted at `sequence` or before).
    private mutating func removeConfirmedWrites(upTo sequence: UInt64, origin: String?, writeID: UInt64?) -> Set<String> {
        writes.removeConfirmed(upTo: sequence, echoed: origin != nil ? writeID : nil)
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
            let pending = writes.all
            var start = pending.startIndex
            var written = false
            for index in pending.indices.reversed() where pending[index].changes.contains(where: { $0.property == property }) {
                written = true
                if pending[index].changes.contains(where: { $0.property == property && $0.replacesWholeValue }) {
                    start = index
                    break
                }
            }
            var value = confirmedValue(of: property)
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
