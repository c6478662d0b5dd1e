import StateBusRuntime
import ZeroMQ

/// One request to a host's (or relay's) control socket and its one reply, for tools that
/// ask without joining: ``HostDescription/fetch(controlEndpoint:timeout:security:)`` and
/// ``ConnectedView/list(controlEndpoint:timeout:security:)``.
enum ControlProbe {
    /// Sends `request` and waits for the first reply that answers it. Given several control
    /// endpoints (a high-availability group's hosts, separated by commas), asks them all at
    /// once and takes the leader's answer: a standby's `NOT_LEADER` counts only when no host
    /// answers otherwise, and a leader it names that is not listed is asked too.
    /// - Returns: the reply, or `nil` when nothing answered within `timeout`.
    static func ask(
        controlEndpoint: String, timeout: Duration, security: ReplicaSecurity?, request: FollowerRequest
    ) async throws -> FollowerReply? {
        let endpoints = try ControlEndpoints(controlEndpoint).listed
        guard endpoints.count > 1 else {
            return try await askOne(controlEndpoint: controlEndpoint, timeout: timeout, security: security, request: request)
        }
        let deadline = ContinuousClock.now + timeout
        let (answer, _, refusal) = try await askAll(endpoints, timeout: timeout, security: security, request: request)
        if let answer { return answer }
        // Every host that answered is a standby: ask the leader one of them named.
        if let refusal, case .error(_, let leader) = refusal.body, !leader.isEmpty, !endpoints.contains(leader) {
            let left = deadline - .now
            if left > .zero {
                return try await askOne(controlEndpoint: leader, timeout: left, security: security, request: request) ?? refusal
            }
        }
        return refusal
    }

    /// The endpoint among `endpoints` whose host welcomes a hello (the leader of their group:
    /// standbys refuse), or `nil` when none does within `timeout`.
    static func leader(among endpoints: [String], timeout: Duration, security: ReplicaSecurity?) async -> String? {
        guard let found = try? await askAll(endpoints, timeout: timeout, security: security, request: .hello(.probe)),
            case .welcome? = found.answer?.body
        else { return nil }
        return found.endpoint
    }

    /// Asks every endpoint at once.
    /// - Returns: the first answer that is not a standby's refusal and the endpoint that gave
    ///   it, and a refusal when only standbys answered.
    private static func askAll(
        _ endpoints: [String], timeout: Duration, security: ReplicaSecurity?, request: FollowerRequest
    ) async throws -> (answer: FollowerReply?, endpoint: String?, refusal: FollowerReply?) {
        try await withThrowingTaskGroup(of: (FollowerReply?, String).self) { group in
            for endpoint in endpoints {
                group.addTask { (try await askOne(controlEndpoint: endpoint, timeout: timeout, security: security, request: request), endpoint) }
            }
            var refusal: FollowerReply?
            for try await (reply, endpoint) in group {
                guard let reply else { continue }
                if case .error(let error, _) = reply.body, error.code == .notLeader {
                    refusal = refusal ?? reply
                    continue
                }
                group.cancelAll()
                return (reply, endpoint, nil)
            }
            return (nil, nil, refusal)
        }
    }

    /// Asks one endpoint.
    private static func askOne(
        controlEndpoint: String, timeout: Duration, security: ReplicaSecurity?, request: FollowerRequest
    ) async throws -> FollowerReply? {
        try RuntimeFolder.checkEndpoint(controlEndpoint)
        let loop = try IOLoop(context: try Context(), name: "statebus-probe")
        defer { loop.shutdown() }
        let socket = try await AsyncSocket(loop: loop, type: .dealer)
        if let security {
            try await socket.withSocket { socket in try socket.makeCurveClient(keys: security.keys, serverKey: security.hostPublicKey) }
        }
        try await socket.connect(controlEndpoint)
        try socket.send(try request.encoded(version: StateBusProtocol.version1, requestID: 1))
        let reply = try await withDeadline(timeout) { () -> FollowerReply? in
            for await frames in socket.messages {
                // Only the reply to this request: a reply with request id 0 is the
                // host's answer to a request it could not read, and is one too.
                if let reply = try? FollowerReply(bytes: frames.last ?? []), reply.requestID <= 1 { return reply }
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
