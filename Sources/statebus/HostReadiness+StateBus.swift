import StateBus
import StateBusLaunch

/// The readiness check of `statebus launch` and `statebus demo`: a host is ready once it
/// describes itself on its control endpoint, or, for a host with keys, once it answers a
/// CURVE handshake with its key (``LaunchKeys/hostPublicKeyFile``). A standby of a
/// high-availability group is ready when it refuses with `NOT_LEADER`: it answers.
let hostAnswers: HostReadiness = { endpoint, timeout in
    if let file = LaunchKeys.hostPublicKeyFile {
        try await HostDescription.probeHandshake(controlEndpoint: endpoint, hostPublicKey: try CurveKeyFile.loadPublic(at: file), timeout: timeout)
    } else {
        do {
            _ = try await HostDescription.fetch(controlEndpoint: endpoint, timeout: timeout)
        } catch let error as StateBusError where error.code == .notLeader {}
    }
}
