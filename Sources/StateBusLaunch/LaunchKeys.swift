import Foundation
import StateBusRuntime

/// The key files of a launch: which file each node's variables name, and the host key a
/// readiness check uses.
///
/// A launch file names key *files*, per node (`key:`, `authorized:`, `host_key:`); the
/// launcher passes their paths in the node's environment (``EnvironmentVariableName/keyFile``
/// and the others), never a key itself: an environment is readable by the user's other
/// processes and a command line by everyone's.
public enum LaunchKeys {
    /// The host's public key file while the launcher checks that host's readiness, `nil`
    /// for a host without keys: a ``HostReadiness`` check reads it to probe with CURVE.
    @TaskLocal public static var hostPublicKeyFile: String?

    /// The public key file of a host node: its `host_key:`, else its `key:` with `.key`
    /// replaced by `.pub` (as `statebus keygen` names the pair).
    public static func publicKeyFile(of host: LaunchFile.Node) -> String? {
        if let hostKey = host.hostKey { return hostKey }
        guard let key = host.key else { return nil }
        return (key.hasSuffix(".key") ? String(key.dropLast(4)) : key) + ".pub"
    }

    /// The key variables of a node whose host is `host`.
    static func variables(for node: LaunchFile.Node, host: LaunchFile.Node?) -> [String: String] {
        var variables: [String: String] = [:]
        if let key = node.key { variables[EnvironmentVariableName.keyFile] = key }
        if let authorized = node.authorized { variables[EnvironmentVariableName.authorizedKeysFile] = authorized }
        let hostKey = node.role == .host ? node.hostKey : node.hostKey ?? host.flatMap(publicKeyFile(of:))
        if let hostKey { variables[EnvironmentVariableName.hostKeyFile] = hostKey }
        return variables
    }
}
