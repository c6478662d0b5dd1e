import StateBus
import StateBusLaunch

/// The readiness check of `statebus launch` and `statebus demo`: a host is ready once it
/// describes itself on its control endpoint.
let hostAnswers: HostReadiness = { endpoint, timeout in
    _ = try await HostDescription.fetch(controlEndpoint: endpoint, timeout: timeout)
}
