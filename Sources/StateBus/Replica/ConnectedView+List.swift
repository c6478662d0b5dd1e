// A client's question to a host or relay: who is connected.

extension ConnectedView {
    /// Asks a host or relay which views are connected to it.
    /// - Parameters:
    ///   - controlEndpoint: its control endpoint.
    ///   - timeout: how long to wait for the answer.
    ///   - security: CURVE keys, for a host with keys (any authorized key may ask).
    /// - Throws: `StateBusError.timeout` when nothing answers in time, or the host's error
    ///   (`badRequest` from a host older than this request, say).
    public static func list(controlEndpoint: String, timeout: Duration = .seconds(5), security: ReplicaSecurity? = nil) async throws
        -> ViewList
    {
        let reply = try await ControlProbe.ask(controlEndpoint: controlEndpoint, timeout: timeout, security: security, request: .views)
        switch reply?.body {
        case .views(let list)?:
            return list
        case .error(let error, _)?:
            throw error
        default:
            throw ControlProbe.silence(at: controlEndpoint, timeout: timeout, security: security)
        }
    }
}
