/// How a ``Launcher`` learns that a host it started is ready: a check that returns once the
/// host answers on its control endpoint, or throws when it does not answer within `timeout`.
///
/// The launcher knows processes, not the protocol, so whoever starts a launch supplies the
/// check. With StateBus, ask the host to describe itself:
///
/// ```swift
/// let launcher = Launcher(file: file, readiness: { endpoint, timeout in
///     _ = try await HostDescription.fetch(controlEndpoint: endpoint, timeout: timeout)
/// }, output: { print($0) })
/// ```
///
/// - Parameters:
///   - controlEndpoint: the host's control endpoint (``Launcher/controlEndpoint(of:)``).
///   - timeout: how long the host may take to answer (the launch file's `ready_timeout`).
/// - Throws: any error when the host does not answer in time; the launcher reports it as a
///   ``LaunchError`` with the host's last lines.
public typealias HostReadiness = @Sendable (_ controlEndpoint: String, _ timeout: Duration) async throws -> Void
