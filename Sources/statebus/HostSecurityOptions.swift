import ArgumentParser
import Foundation
import StateBus
import StateBusRuntime

/// A host's `--key`, `--authorized` and `--insecure`, or the environment the launcher
/// injects (`STATEBUS_KEY_FILE`, `STATEBUS_AUTHORIZED_KEYS_FILE`: paths, never keys).
struct HostSecurityOptions: ParsableArguments {
    @Option(name: .long, help: "The host's CURVE secret key file: encrypt both sockets (default: $STATEBUS_KEY_FILE).")
    var key: String?

    @Option(name: .long, help: "The authorized keys file: ROLE PUBLIC-KEY NAME per line (default: $STATEBUS_AUTHORIZED_KEYS_FILE).")
    var authorized: String?

    @Flag(
        name: .long,
        help:
            "Serve a tcp endpoint without keys (loopback included: every user of the machine reaches it); anyone who can reach it reads and writes everything."
    )
    var insecure = false

    /// Sets ``HostConfiguration/security`` and ``HostConfiguration/allowsInsecureNetwork``.
    /// - Throws: `ValidationError` when only one of `--key` and `--authorized` is given, or
    ///   a file is unusable (a key readable by others, a malformed line: file and line).
    func apply(to configuration: inout HostConfiguration) throws {
        let environment = ProcessInfo.processInfo.environment
        let keyFile = key ?? environment[EnvironmentVariableName.keyFile]
        let authorizedFile = authorized ?? environment[EnvironmentVariableName.authorizedKeysFile]
        configuration.allowsInsecureNetwork = insecure
        switch (keyFile, authorizedFile) {
        case (nil, nil): return
        case (let keyFile?, let authorizedFile?):
            do {
                configuration.security = try HostSecurity(keyFile: keyFile, authorizedKeysFile: authorizedFile)
            } catch {
                throw ValidationError("\(error)")
            }
        case (nil, _): throw ValidationError("--authorized needs --key too: the host's secret key file (`statebus keygen host` makes one)")
        case (_, nil):
            throw ValidationError("--key needs --authorized too: the file of keys the host admits, one `ROLE PUBLIC-KEY NAME` per line")
        }
    }
}
