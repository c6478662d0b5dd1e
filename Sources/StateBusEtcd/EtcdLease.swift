/// A lease granted by etcd: keys attached to it are deleted when it expires or is revoked.
public struct EtcdLease: Sendable, Equatable, Hashable {
    /// The lease's ID, chosen by etcd (IDs go past 2^53, so keep them as `Int64`).
    public var id: Int64
    /// The time to live etcd granted, in seconds; it may be more than was asked for, because
    /// etcd raises short TTLs to its minimum (1 s or more, depending on its election timeout).
    public var ttlSeconds: Int64

    /// Creates a lease value.
    public init(id: Int64, ttlSeconds: Int64) {
        self.id = id
        self.ttlSeconds = ttlSeconds
    }
}
