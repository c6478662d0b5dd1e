import StateBusRuntime

/// The host's source of truth: its objects and its queue of applied-but-unpublished batches,
/// under one lock, so that sequence numbers are assigned and queued in the same order from
/// any thread (the I/O loop applies views' writes, the host's own code applies its changes).
///
/// It knows nothing about the wire: ``HostServer`` encodes the queued batches.
final class SourceOfTruth: Sendable {
    struct Inner {
        /// Each object's store, by the object's index (its place in the welcome).
        var stores: [ObjectStore]
        /// Batches in sequence order per object, waiting for the loop to publish them.
        var unpublished: [AppliedBatch] = []
        /// An empty queue with room, given back by the loop once it published what it took
        /// (``recycle(_:)``): the next batches go into memory already in use, not into a new
        /// allocation after every take, whose pages (past the allocator's threshold, freshly
        /// mapped) are faulted in one by one as the batches are written.
        var spare: [AppliedBatch] = []
        /// Told the outcome of the group commit of the batches queued before them (for
        /// ``StateHost/applyDurably(_:to:)``); taken together with those batches.
        var durabilityWaiters: [DurabilityEntry] = []
        var publishScheduled = false
        /// What the queued batches hold, in bytes (``AppliedBatch/queuedBytes``), against
        /// ``HostLimits/maxUnpublishedBytes``.
        var unpublishedBytes = 0
        /// What the batches the loop took and its group commit holds back hold, in bytes
        /// (``noteHeld(bytes:)``): counted against the same bound, so that a commit that
        /// stalls (a slow disk) does not move the growth from one queue to the other.
        var heldBytes = 0
        /// The host has stopped: nothing waits for room any more.
        var stopped = false
        /// A burst's queue the loop has published, its batches not yet released: the host's
        /// code, whose thread made most of their values, releases them at its next change
        /// (in ``apply(_:to:roomWait:)``), so its allocator takes that memory back without
        /// the loop's frees contending with its own allocations; or the loop does, once
        /// the burst is over (``recycle(_:)``).
        var publishedBurst: [AppliedBatch] = []

        /// The store of the object of that name.
        func store(_ object: String, in truth: SourceOfTruth) -> ObjectStore? {
            truth.index(of: object).map { stores[$0] }
        }
    }

    /// Called on the loop thread with `nil` once a batch is durable (or needed no commit), or
    /// with the `persistenceFailed` error that undid it.
    typealias DurabilityWaiter = @Sendable (StateBusError?) -> Void

    /// A waiter and the batch it waits for.
    struct DurabilityEntry {
        var object: String
        var sequence: UInt64
        var waiter: DurabilityWaiter
    }

    let epoch: UInt64
    let inner: Locked<Inner>
    /// The objects' names, by index.
    let names: [String]
    /// Each object's change feed, by index.
    let feeds: [ChangeFeed<String>]
    /// The size bounds every write is checked against.
    let limits: HostLimits
    private let indexes: [String: Int]

    init(epoch: UInt64, objects: [ObjectDefinition], limits: HostLimits = HostLimits()) {
        self.epoch = epoch
        self.limits = limits
        names = objects.map(\.name)
        feeds = objects.map { _ in ChangeFeed<String>() }
        indexes = Dictionary(objects.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        inner = Locked(Inner(stores: objects.map { ObjectStore(definition: $0) }))
    }

    /// The index of the object of that name.
    @inline(__always)
    func index(of object: String) -> Int? {
        // A host serves few objects: comparing names beats hashing one.
        if names.count <= 8 { return names.firstIndex(of: object) }
        return indexes[object]
    }

    /// The change feed of the object of that name.
    func feed(of object: String) -> ChangeFeed<String>? { index(of: object).map { feeds[$0] } }

    /// Reads the store of the object of that name under the lock.
    func withStore<Result>(_ object: String, _ body: (ObjectStore) -> Result) -> Result? {
        guard let index = index(of: object) else { return nil }
        return inner.withLock { body($0.stores[index]) }
    }

    /// Runs `body` on the store of the object of that name under the lock, for what it keeps
    /// beside the values (a follower's journal); the values change only through batches.
    func withStoreFollowing<Result>(_ object: String, _ body: (inout ObjectStore) -> Result) -> Result? {
        guard let index = index(of: object) else { return nil }
        return inner.withLock { body(&$0.stores[index]) }
    }

    /// Validates and applies one batch; queues it for publication.
    /// - Parameter whenDurable: queued with the batch, under the same lock, so the group
    ///   commit that takes the batch also answers it.
    /// - Returns: the batch's sequence, and whether the caller must schedule a publish.
    /// - Parameter roomWait: for the host's own changes made off its loop: while the queue
    ///   holds ``HostLimits/maxUnpublishedBytes`` or more, wait up to this long for the loop
    ///   to take it, then refuse the batch (`overloaded`). `nil` (the loop's own writes, a
    ///   compensation) queues at once: the loop takes the queue at the end of its turn.
    func apply(
        _ changes: [PropertyChange], to object: String, fromView origin: String?, writeID: UInt64,
        whenDurable: DurabilityWaiter? = nil, roomWait: Duration? = nil
    ) throws(StateBusError) -> (sequence: UInt64, schedulePublish: Bool) {
        try apply(
            changes.count == 1 ? .one(changes[0]) : .many(changes), to: object, fromView: origin, writeID: writeID, whenDurable: whenDurable,
            roomWait: roomWait)
    }

    /// ``apply(_:to:fromView:writeID:whenDurable:roomWait:)-([PropertyChange],_,_,_,_,_)`` for
    /// a batch of one change: the host's own updates, without a list to allocate.
    func apply(_ change: PropertyChange, to object: String, roomWait: Duration?) throws(StateBusError) -> (sequence: UInt64, schedulePublish: Bool) {
        try apply(.one(change), to: object, fromView: nil, writeID: 0, whenDurable: nil, roomWait: roomWait)
    }

    /// A batch's changes as given: one, or a list.
    private enum Changes {
        case one(PropertyChange)
        case many([PropertyChange])
    }

    private func apply(
        _ changes: Changes, to object: String, fromView origin: String?, writeID: UInt64, whenDurable: DurabilityWaiter?, roomWait: Duration?
    ) throws(StateBusError) -> (sequence: UInt64, schedulePublish: Bool) {
        guard let index = index(of: object) else {
            throw StateBusError(
                .unknownObject, "this host serves no object '\(object)'; it serves: \(names.sorted().joined(separator: ", "))", object: object)
        }
        let bound = limits.maxUnpublishedBytes
        var toRelease: [AppliedBatch] = []
        // Released on this thread, after the lock (see `Inner.publishedBurst`).
        defer { if !toRelease.isEmpty { keepAsSpare(emptying: toRelease) } }
        let result = inner.withLock(
            waitingUpTo: roomWait ?? .zero, until: { roomWait == nil || $0.unpublishedBytes + $0.heldBytes < bound || $0.stopped }
        ) { inner, _ -> Result<(UInt64, Bool), StateBusError> in
            if roomWait != nil {
                // A stopped host publishes nothing more: its own changes are refused, not
                // made and never sent.
                if inner.stopped || inner.unpublishedBytes + inner.heldBytes >= bound {
                    return .failure(Self.noRoom(inner, waited: roomWait, bound: bound))
                }
                if !inner.publishedBurst.isEmpty { swap(&toRelease, &inner.publishedBurst) }
            }
            let sequence: UInt64
            let resolved: BatchChanges
            do throws(StateBusError) {
                // Changed in place: a copy of the store would copy every value of the object.
                switch changes {
                case .one(let change):
                    let (newSequence, changed) = try inner.stores[index].validateAndApply(change, fromView: origin != nil, limits: limits)
                    (sequence, resolved) = (newSequence, BatchChanges(consume changed))
                case .many(let list):
                    let (newSequence, changed) = try inner.stores[index].validateAndApply(list, fromView: origin != nil, limits: limits)
                    (sequence, resolved) = (newSequence, BatchChanges(consume changed))
                }
            } catch {
                return .failure(error)
            }
            let batch = AppliedBatch(
                object: object, objectIndex: index, sequence: sequence, origin: origin, writeID: writeID, changes: consume resolved)
            inner.unpublishedBytes += batch.queuedBytes
            // Moved, not copied, into the queue: a copy retains every string and value the
            // changes hold, and its end releases them.
            inner.unpublished.append(consume batch)
            if let whenDurable { inner.durabilityWaiters.append(DurabilityEntry(object: object, sequence: sequence, waiter: whenDurable)) }
            let schedule = !inner.publishScheduled
            inner.publishScheduled = true
            return .success((sequence, schedule))
        }
        switch result {
        case .failure(let error): throw error
        case .success(let (sequence, schedule)):
            if feeds[index].isObserved {
                switch changes {
                case .one(let change): feeds[index].notify([change])
                case .many(let list): feeds[index].notify(list)
                }
            }
            return (sequence, schedule)
        }
    }

    /// Why a change of the host's own found no room in the queue.
    private static func noRoom(_ inner: borrowing Inner, waited: Duration?, bound: Int) -> StateBusError {
        if inner.stopped { return StateBusError(.closed, "the host has stopped: it publishes no more changes, so this one was not made") }
        return StateBusError(
            .overloaded,
            "the host's changes not yet published held \(inner.unpublishedBytes + inner.heldBytes) bytes (\(inner.heldBytes) of them waiting for a commit; HostLimits.maxUnpublishedBytes: \(bound)) and none left within \(waited ?? .zero): the change was not made; the loop or the disk is stuck, or far slower than the changes come"
        )
    }

    /// Batches taken at once past which the host's own changes are coming in a burst: the
    /// next publication is then left to a timer (``HostServer/burstInterval``), so the code
    /// applying them does not wake the loop for every few batches.
    static let burstBatches = 64

    /// Takes every queued batch, in order, with the waiters queued alongside them.
    /// - Returns: also whether they came in a burst: the caller then promises a publication
    ///   soon (changes applied meanwhile do not ask for one).
    func takeUnpublished() -> (batches: [AppliedBatch], waiters: [DurabilityEntry], burst: Bool) {
        // The queue is empty now: changes waiting for room may go in.
        defer { inner.signalAll() }
        return inner.withLock { inner in
            let burst = inner.unpublished.count >= Self.burstBatches
            inner.publishScheduled = burst
            var taken: [AppliedBatch] = []
            swap(&taken, &inner.spare)
            swap(&taken, &inner.unpublished)
            inner.unpublishedBytes = 0
            defer { inner.durabilityWaiters.removeAll() }
            return (taken, inner.durabilityWaiters, burst)
        }
    }

    /// Records what the group commit holds back (the batches it took and has not released),
    /// in bytes; a change waiting for room is told when that shrinks.
    func noteHeld(bytes: Int) {
        let shrank = inner.withLock { inner -> Bool in
            defer { inner.heldBytes = bytes }
            return bytes < inner.heldBytes
        }
        if shrank { inner.signalAll() }
    }

    /// Ends every wait for room in the queue and refuses the host's own changes from now on
    /// (the host stopped: nothing will publish them) with `closed`.
    func hostStopped() {
        inner.withLock { $0.stopped = true }
        inner.signalAll()
    }

    /// A spare queue of at most this much room is always kept.
    static let keptSpareBytes = 1 << 20
    /// The most room a spare queue keeps, for a host whose code applies changes in a loop
    /// faster than its loop publishes them.
    static let maxSpareBytes = 16 << 20

    /// Takes back a queue the loop took with ``takeUnpublished()`` and has published, to be
    /// the next queue (``keepAsSpare(emptying:)``).
    ///
    /// A burst's queue (``burstBatches`` or more) is instead left whole for the host's code
    /// to release at its next change (``Inner/publishedBurst``), unless one is left already;
    /// a smaller queue means the burst is over, and the loop releases what it left.
    func recycle(_ batches: consuming [AppliedBatch]) {
        let used = batches.count
        var left: [AppliedBatch] = []
        inner.withLock { inner in
            if used >= Self.burstBatches {
                if inner.publishedBurst.isEmpty { swap(&inner.publishedBurst, &batches) }
            } else {
                swap(&left, &inner.publishedBurst)
            }
        }
        if !left.isEmpty { keepAsSpare(emptying: left) }
        keepAsSpare(emptying: batches)
    }

    /// Empties a queue, outside the lock (its batches' values are released), and keeps it
    /// as the next queue: when it is small, or while bursts fill it (at least an eighth of
    /// its room was used) up to ``maxSpareBytes``; a large one that went mostly unused is
    /// freed, so a burst's memory goes with the burst.
    private func keepAsSpare(emptying batches: consuming [AppliedBatch]) {
        let used = batches.count
        batches.removeAll(keepingCapacity: true)
        let bytes = batches.capacity * MemoryLayout<AppliedBatch>.stride
        guard batches.capacity > 0, bytes <= Self.maxSpareBytes, bytes <= Self.keptSpareBytes || used * 8 >= batches.capacity else { return }
        // The larger one is kept (a small queue made elsewhere does not displace a burst's);
        // the other is freed when `batches` ends, after the lock.
        inner.withLock { inner in
            if inner.spare.capacity < batches.capacity { swap(&inner.spare, &batches) }
        }
    }
}
