import StateBus
import StateBusLaunch

/// The readiness check of `statebus launch` and `statebus demo`: a host is ready once it
/// describes itself on its control endpoint, or, for a host with keys, once it answers a
/// CURVE handshake with its key (``LaunchKeys/hostPublicKeyFile``).
let hostAnswers: HostReadiness = { endpoint, timeout in
    if let file = LaunchKeys.hostPublicKeyFile {
        try await HostDescription.probeHandshake(controlEndpoint: endpoint, hostPublicKey: try CurveKeyFile.loadPublic(at: file), timeout: timeout)
    } else {
        _ = try await HostDescription.fetch(controlEndpoint: endpoint, timeout: timeout)
    }
}
