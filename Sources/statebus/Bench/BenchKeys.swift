import Foundation
import StateBus
import StateBusRuntime
import ZeroMQ

/// CURVE keys for the "with keys" rows: a host key pair, one view key pair the host admits
/// with the `write` role, written into the run's scratch folder as `statebus keygen` would.
struct BenchKeys {
    /// The host's settings.
    let host: HostSecurity
    /// The view worker's environment: the paths of its key and of the host's public key.
    let viewEnvironment: [String: String]

    init(folder: ScratchFolder) throws {
        let hostKeys = try CurveKeyPair.generate()
        let viewKeys = try CurveKeyPair.generate()
        let keys = folder.path + "/keys"
        let hostFiles = try CurveKeyFile.write(hostKeys, name: "host", in: keys)
        let viewFiles = try CurveKeyFile.write(viewKeys, name: "view", in: keys)
        let authorized = keys + "/authorized.keys"
        try "write \(viewKeys.publicKey) bench-view\n".write(toFile: authorized, atomically: true, encoding: .utf8)
        host = HostSecurity(keys: hostKeys, authorizedKeysFile: authorized)
        viewEnvironment = [EnvironmentVariableName.keyFile: viewFiles.secret, EnvironmentVariableName.hostKeyFile: hostFiles.public]
    }
}
