import Foundation
import StateBusRuntime
import StateBusWire
import SwiftProtobuf
import ZeroMQ

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
    /// - Throws: `StateBusError.timeout` when nothing answers in time.
    public static func fetch(controlEndpoint: String, timeout: Duration = .seconds(5), security: ReplicaSecurity? = nil) async throws
        -> HostDescription
    {
        try RuntimeFolder.checkEndpoint(controlEndpoint)
        let loop = try IOLoop(context: try Context(), name: "statebus-probe")
        defer { loop.shutdown() }
        let socket = try await AsyncSocket(loop: loop, type: .dealer)
        if let security {
            try await socket.withSocket { socket in try socket.makeCurveClient(keys: security.keys, serverKey: security.hostPublicKey) }
        }
        try await socket.connect(controlEndpoint)
        var request = Statebus_V1_Request()
        request.protocolVersion = StateBusProtocol.version
        request.requestID = 1
        request.hello = Statebus_V1_Hello()
        try socket.send(try request.serializedBytes() as [UInt8])
        let reply: Statebus_V1_Reply? = try await withThrowingTaskGroup(of: Statebus_V1_Reply?.self) { group in
            group.addTask {
                for await frames in socket.messages {
                    if let reply = try? Statebus_V1_Reply(serializedBytes: frames.last ?? []), reply.hasWelcome { return reply }
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let welcome = reply?.welcome else {
            throw StateBusError(
                .timeout,
                "no host answered at \(controlEndpoint) within \(timeout); is it running, and is the endpoint right?"
                    + (security == nil ? " (a host with keys answers only --key/--host-key)" : " Are this key authorized and the host key right?"))
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

extension Statebus_V1_Reply {
    var hasWelcome: Bool {
        if case .welcome = body { return true }
        return false
    }
}
