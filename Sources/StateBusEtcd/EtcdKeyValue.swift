/// A key and its value as etcd stores them, with the revisions that fencing and optimistic
/// concurrency compare against.
public struct EtcdKeyValue: Sendable, Equatable, Hashable {
    /// The key's bytes.
    public var key: [UInt8]
    /// The value's bytes (empty in a delete event).
    public var value: [UInt8]
    /// The revision at which the key was last created; it changes each time the key is
    /// deleted and put again, which makes it a fencing token.
    public var createRevision: Int64
    /// The revision of the key's last change.
    public var modRevision: Int64
    /// How many times the key was put since it was created (1 after the first put).
    public var version: Int64
    /// The lease the key is attached to, or 0 for none.
    public var lease: Int64

    /// Creates a key-value.
    public init(
        key: [UInt8], value: [UInt8], createRevision: Int64 = 0, modRevision: Int64 = 0, version: Int64 = 0, lease: Int64 = 0
    ) {
        self.key = key
        self.value = value
        self.createRevision = createRevision
        self.modRevision = modRevision
        self.version = version
        self.lease = lease
    }

    /// The key decoded as UTF-8 (invalid bytes become U+FFFD).
    public var keyString: String { String(decoding: key, as: UTF8.self) }
    /// The value decoded as UTF-8 (invalid bytes become U+FFFD).
    public var valueString: String { String(decoding: value, as: UTF8.self) }
}
