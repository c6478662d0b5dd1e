import StateBusWire

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

    /// Asks a host for its welcome.
    /// - Parameters:
    ///   - controlEndpoint: the host's control endpoint.
    ///   - timeout: how long to wait for the answer.
    ///   - security: CURVE keys, for a host that has them.
    /// - Throws: `StateBusError.timeout` when nothing answers in time, or the host's error
    ///   (`forbidden`, say).
    public static func fetch(controlEndpoint: String, timeout: Duration = .seconds(5), security: ReplicaSecurity? = nil) async throws
        -> HostDescription
    {
        let reply = try await ControlProbe.ask(
            controlEndpoint: controlEndpoint, timeout: timeout, security: security, body: .hello(Statebus_V1_Hello()))
        if case .error(let error) = reply?.body { throw StateBusError(wire: error) }
        guard case .welcome(let welcome) = reply?.body else {
            throw ControlProbe.silence(at: controlEndpoint, timeout: timeout, security: security)
        }
        var objects: [String: [Property]] = [:]
        var actions: [String: [ActionDefinition]] = [:]
        for object in welcome.objects {
            objects[object.name] = object.properties.map {
                Property(name: $0.name, kind: ValueKind(wire: $0.kind), typeName: $0.typeName, isWritable: $0.writable, isPersisted: $0.persisted)
            }
            if !object.actions.isEmpty { actions[object.name] = object.actions.map(ActionDefinition.init(wire:)) }
        }
        return HostDescription(
            name: welcome.hostName, epoch: welcome.epoch, updatesEndpoint: welcome.updatesEndpoint, objects: objects, actions: actions)
    }
}
