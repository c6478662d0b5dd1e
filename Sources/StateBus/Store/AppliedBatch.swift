/// A batch the host applied to an object and has not published yet: the domain form of a
/// publication's update batch, queued by ``SourceOfTruth`` and turned into wire messages by
/// ``HostServer`` on the I/O loop, outside the lock.
struct AppliedBatch: Sendable {
    /// The object it changed.
    let object: String
    /// The object's index among the host's objects (its index in the welcome).
    let objectIndex: Int
    /// Its sequence number in that object.
    let sequence: UInt64
    /// The view id of the write it came from, or `nil` for the host's own changes.
    let origin: String?
    /// The write's id (0 for the host's own changes).
    let writeID: UInt64
    /// The changes, each resolved to the property's new whole value.
    let changes: BatchChanges
    /// What it holds in the host's queues, in bytes, against
    /// ``HostLimits/maxUnpublishedBytes`` (``queuedBytes(of:)``): found once, where it is made.
    let queuedBytes: Int

    init(object: String, objectIndex: Int, sequence: UInt64, origin: String?, writeID: UInt64, changes: BatchChanges) {
        self.object = object
        self.objectIndex = objectIndex
        self.sequence = sequence
        self.origin = origin
        self.writeID = writeID
        queuedBytes = Self.queuedBytes(of: changes)
        self.changes = changes
    }
}

/// A batch's resolved changes: the first inline, any others in a list, so the common batch
/// of one change costs no allocation (a burst of the host's own updates queues millions).
struct BatchChanges: RandomAccessCollection, Sendable {
    let first: ObjectStore.Resolved
    /// The others: a slice of the list the batch was applied from (sharing its storage, so a
    /// batch of several changes is not copied once more).
    let rest: ArraySlice<ObjectStore.Resolved>

    init(_ first: ObjectStore.Resolved, rest: ArraySlice<ObjectStore.Resolved> = []) {
        self.first = first
        self.rest = rest
    }

    /// The changes of a non-empty list.
    init(_ all: [ObjectStore.Resolved]) {
        self.init(all[0], rest: all.dropFirst())
    }

    var startIndex: Int { 0 }
    var endIndex: Int { rest.count + 1 }
    subscript(position: Int) -> ObjectStore.Resolved { position == 0 ? first : rest[rest.startIndex + position - 1] }
}
