/// A change seen by a watch.
public struct EtcdWatchEvent: Sendable, Equatable, Hashable {
    /// What happened to the key.
    public enum Kind: Sendable, Equatable, Hashable {
        /// The key was created or changed.
        case put
        /// The key was deleted, or its lease ended.
        case delete
    }

    /// What happened.
    public var kind: Kind
    /// The key after the change; for a delete, the key with its `modRevision` only.
    public var keyValue: EtcdKeyValue

    /// Creates an event.
    public init(kind: Kind, keyValue: EtcdKeyValue) {
        self.kind = kind
        self.keyValue = keyValue
    }
}
