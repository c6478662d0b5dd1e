import Synchronization

/// The host's source of truth: its objects and its queue of applied-but-unpublished batches,
/// under one lock, so that sequence numbers are assigned and queued in the same order from
/// any thread (the I/O loop applies views' writes, the host's own code applies its changes).
///
/// It knows nothing about the wire: ``HostServer`` encodes the queued batches.
final class SourceOfTruth: Sendable {
    struct Inner {
        var stores: [String: ObjectStore]
        /// Batches in sequence order per object, waiting for the loop to publish them.
        var unpublished: [AppliedBatch] = []
        /// Told the outcome of the group commit of the batches queued before them (for
        /// ``StateHost/applyDurably(_:to:)``); taken together with those batches.
        var durabilityWaiters: [DurabilityEntry] = []
        var publishScheduled = false
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
    let inner: Mutex<Inner>
    let feeds: [String: ChangeFeed]
    /// The size bounds every write is checked against.
    let limits: HostLimits

    init(epoch: UInt64, objects: [ObjectDefinition], limits: HostLimits = HostLimits()) {
        self.epoch = epoch
        self.limits = limits
        var stores: [String: ObjectStore] = [:]
        var feeds: [String: ChangeFeed] = [:]
        for object in objects {
            stores[object.name] = ObjectStore(definition: object)
            feeds[object.name] = ChangeFeed()
        }
        inner = Mutex(Inner(stores: stores))
        self.feeds = feeds
    }

    /// Validates and applies one batch; queues it for publication.
    /// - Parameter whenDurable: queued with the batch, under the same lock, so the group
    ///   commit that takes the batch also answers it.
    /// - Returns: the batch's sequence, and whether the caller must schedule a publish.
    func apply(
        _ changes: [PropertyChange], to object: String, fromView origin: String?, writeID: UInt64,
        whenDurable: DurabilityWaiter? = nil
    ) throws(StateBusError) -> (sequence: UInt64, schedulePublish: Bool) {
        let result = inner.withLock { inner -> Result<(UInt64, Bool), StateBusError> in
            guard inner.stores[object] != nil else {
                let known = inner.stores.keys.sorted().joined(separator: ", ")
                return .failure(StateBusError(.unknownObject, "this host serves no object '\(object)'; it serves: \(known)", object: object))
            }
            let resolved: [ObjectStore.Resolved]
            do throws(StateBusError) {
                resolved = try inner.stores[object]!.validate(changes, fromView: origin != nil, limits: limits)
            } catch {
                return .failure(error)
            }
            // Changed in place: a copy of the store taken out of the dictionary would make
            // the change copy every value of the object.
            let sequence = inner.stores[object]!.apply(resolved)
            inner.unpublished.append(AppliedBatch(object: object, sequence: sequence, origin: origin, writeID: writeID, changes: resolved))
            if let whenDurable { inner.durabilityWaiters.append(DurabilityEntry(object: object, sequence: sequence, waiter: whenDurable)) }
            let schedule = !inner.publishScheduled
            inner.publishScheduled = true
            return .success((sequence, schedule))
        }
        switch result {
        case .failure(let error): throw error
        case .success(let (sequence, schedule)):
            feeds[object]?.notify(changes)
            return (sequence, schedule)
        }
    }

    /// Takes every queued batch, in order, with the waiters queued alongside them.
    func takeUnpublished() -> (batches: [AppliedBatch], waiters: [DurabilityEntry]) {
        inner.withLock { inner in
            inner.publishScheduled = false
            defer {
                inner.unpublished.removeAll(keepingCapacity: true)
                inner.durabilityWaiters.removeAll()
            }
            return (inner.unpublished, inner.durabilityWaiters)
        }
    }
}
