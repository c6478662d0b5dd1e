// A one-shot probe of a host: its welcome, as ``HostDescription``.

extension HostDescription {
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
        let reply = try await ControlProbe.ask(controlEndpoint: controlEndpoint, timeout: timeout, security: security, request: .hello(.probe))
        switch reply?.body {
        case .welcome(let welcome)?: return welcome.description
        case .error(let error, _)?: throw error
        default: throw ControlProbe.silence(at: controlEndpoint, timeout: timeout, security: security)
        }
    }
}
