import StateBusRuntime
import StateBusWire
import ZeroMQ

/// One request to a host's (or relay's) control socket and its one reply, for tools that
/// ask without joining: ``HostDescription/fetch(controlEndpoint:timeout:security:)`` and
/// ``ConnectedView/list(controlEndpoint:timeout:security:)``.
enum ControlProbe {
    /// Sends `body` and waits for the first reply that answers it.
    /// - Returns: the reply, or `nil` when nothing answered within `timeout`.
    static func ask(
        controlEndpoint: String, timeout: Duration, security: ReplicaSecurity?, body: Statebus_V1_Request.OneOf_Body
    ) async throws -> Statebus_V1_Reply? {
        try RuntimeFolder.checkEndpoint(controlEndpoint)
        let loop = try IOLoop(context: try Context(), name: "statebus-probe")
        defer { loop.shutdown() }
        let socket = try await AsyncSocket(loop: loop, type: .dealer)
        if let security {
            try await socket.withSocket { socket in try socket.makeCurveClient(keys: security.keys, serverKey: security.hostPublicKey) }
        }
        try await socket.connect(controlEndpoint)
        var request = Statebus_V1_Request()
        request.protocolVersion = StateBusProtocol.version1
        request.requestID = 1
        request.body = body
        try socket.send(try request.serializedBytes() as [UInt8])
        let reply = try await withDeadline(timeout) { () -> Statebus_V1_Reply? in
            for await frames in socket.messages {
                // Only the reply to this request: a reply with request id 0 is the
                // host's answer to a request it could not read, and is one too.
                if let reply = try? Statebus_V1_Reply(serializedBytes: frames.last ?? []), reply.requestID <= 1 { return reply }
            }
            return nil
        }
        // No reply either way: the deadline passed, or the socket's messages ended first.
        return reply ?? nil
    }

    /// The error for a host that did not answer in time.
    static func silence(at controlEndpoint: String, timeout: Duration, security: ReplicaSecurity?) -> StateBusError {
        StateBusError(
            .timeout,
            "no host answered at \(controlEndpoint) within \(timeout); is it running, and is the endpoint right?"
                + (security == nil ? " (a host with keys answers only --key/--host-key)" : " Are this key authorized and the host key right?"))
    }
}
