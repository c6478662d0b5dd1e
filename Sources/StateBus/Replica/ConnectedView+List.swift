import StateBusWire

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
        let reply = try await ControlProbe.ask(
            controlEndpoint: controlEndpoint, timeout: timeout, security: security, body: .views(Statebus_V1_ViewsRequest()))
        switch reply?.body {
        case .viewList(let list):
            return ViewList(views: list.views.map(ConnectedView.init(wire:)), omitted: Int(list.omitted))
        case .error(let error):
            throw StateBusError(wire: error)
        default:
            throw ControlProbe.silence(at: controlEndpoint, timeout: timeout, security: security)
        }
    }
}
