import StateBusRuntime

/// The variables the launcher puts in a node's environment, the cross-process
/// `environmentObject`: `STATEBUS_NODE` (its name), `STATEBUS_ROLE`, `STATEBUS_OBJECTS` (its
/// objects, comma-separated) and `STATEBUS_CONTROL` (its host's control endpoint; for a host,
/// the endpoint to bind). Anything that starts nodes the way the launcher does (the testing
/// product, for one) uses this, so a node finds the same names however it was started.
public enum NodeEnvironment {
    /// The variables for one node.
    /// - Parameters:
    ///   - name: the node's name.
    ///   - role: host or view.
    ///   - objects: the objects it serves or binds.
    ///   - control: its host's control endpoint, if known (for a host or relay: the endpoint
    ///     to bind).
    ///   - upstream: for a relay, the control endpoint of what it relays.
    ///   - highAvailability: for a host, the group it joins (`STATEBUS_HA`, `STATEBUS_HA_GROUP`).
    public static func variables(
        name: String, role: LaunchFile.Node.Role, objects: [String], control: String?, upstream: String? = nil,
        highAvailability: LaunchFile.HighAvailabilityGroup? = nil
    ) -> [String: String] {
        var variables = [
            EnvironmentVariableName.node: name,
            EnvironmentVariableName.role: role.rawValue,
            EnvironmentVariableName.objects: objects.joined(separator: ",")
        ]
        if let control { variables[EnvironmentVariableName.control] = control }
        if let upstream { variables[EnvironmentVariableName.upstream] = upstream }
        if let highAvailability {
            variables[EnvironmentVariableName.highAvailabilityEtcd] = highAvailability.etcd
            variables[EnvironmentVariableName.highAvailabilityGroup] = highAvailability.group
        }
        return variables
    }
}
