/// What a running host says about itself in its welcome: epoch, endpoints, object schemas.
public struct HostDescription: Sendable {
    /// One property of an object's schema.
    public struct Property: Sendable, Hashable {
        /// The name.
        public let name: String
        /// The value kind, when it is a plain one.
        public let kind: ValueKind?
        /// The host's type name.
        public let typeName: String
        /// Whether views may write it.
        public let isWritable: Bool
        /// Whether the host keeps it durable.
        public let isPersisted: Bool
    }

    /// The host's name.
    public let name: String
    /// The run's epoch.
    public let epoch: UInt64
    /// The updates endpoint it announces.
    public let updatesEndpoint: String
    /// Each object's properties, by object name.
    public let objects: [String: [Property]]
    /// Each object's actions (the methods views may call), by object name; objects
    /// without actions are absent.
    public let actions: [String: [ActionDefinition]]
}
