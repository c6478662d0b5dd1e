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
    let changes: [ObjectStore.Resolved]
}
