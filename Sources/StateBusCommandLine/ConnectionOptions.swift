import ArgumentParser
import Foundation
import StateBus
import StateBusRuntime

/// Where a host is and which object to bind: by flag, or from the environment the
/// launcher injects (`STATEBUS_CONTROL`, `STATEBUS_OBJECT`); how long to wait for it: by
/// flag, or `STATEBUS_TIMEOUT` (for scripts and tests on a slow or busy machine).
package struct ConnectionOptions: ParsableArguments {
    package init() {}

    @Option(name: .long, help: "The host's control endpoint (default: $STATEBUS_CONTROL).")
    package var control: String?

    @Option(name: .long, help: "The object to bind (default: $STATEBUS_OBJECT, else the first of $STATEBUS_OBJECTS).")
    package var object: String?

    @Option(name: .long, help: "Seconds to wait for the host (default: $STATEBUS_TIMEOUT, else 10).")
    package var timeout: Double?

    /// The wait when neither `--timeout` nor `STATEBUS_TIMEOUT` gives one.
    package static let defaultTimeout: Double = 10

    @Option(name: .long, help: "This client's CURVE secret key file, for a host with keys (default: $STATEBUS_KEY_FILE).")
    package var key: String?

    @Option(name: .customLong("host-key"), help: "The host's public key file or Z85 key (default: $STATEBUS_HOST_KEY_FILE).")
    package var hostKey: String?

    /// The CURVE settings `--key` and `--host-key` (or the environment) name, or `nil` for
    /// none.
    /// - Throws: `ValidationError` when only one of the two is given, or a key file is
    ///   unusable (readable by others, say).
    package func security() throws -> ReplicaSecurity? {
        let environment = ProcessInfo.processInfo.environment
        let keyFile = key ?? environment[EnvironmentVariableName.keyFile]
        let hostKeyFile = hostKey ?? environment[EnvironmentVariableName.hostKeyFile]
        switch (keyFile, hostKeyFile) {
        case (nil, nil): return nil
        case (let keyFile?, let hostKeyFile?):
            do {
                return try ReplicaSecurity(keyFile: keyFile, hostKey: hostKeyFile)
            } catch {
                throw ValidationError("\(error)")
            }
        case (nil, _): throw ValidationError("--host-key needs --key too: this client's own secret key file (`statebus keygen NAME` makes one)")
        case (_, nil): throw ValidationError("--key needs --host-key too: the host's public key file (its .pub)")
        }
    }

    /// The endpoint to reach the host on: `--control`, else `$STATEBUS_CONTROL`; empty when
    /// neither is given (``validate()`` rejects that).
    package var controlEndpoint: String {
        control ?? ProcessInfo.processInfo.environment[EnvironmentVariableName.control] ?? ""
    }

    /// The object to bind: `--object`, else ``injectedObject``; empty when neither names one
    /// (``requireObject()`` rejects that, for the commands that need an object).
    package var objectName: String { object ?? Self.injectedObject ?? "" }

    /// The object named by the environment: `$STATEBUS_OBJECT`, else the first of
    /// `$STATEBUS_OBJECTS` (comma-separated, as the launcher injects).
    package static var injectedObject: String? {
        let environment = ProcessInfo.processInfo.environment
        return environment[EnvironmentVariableName.object]
            ?? environment[EnvironmentVariableName.objects]?.split(separator: ",").first.map(String.init)
    }

    /// The wait asked for: `--timeout`, else `STATEBUS_TIMEOUT`, else ``defaultTimeout``.
    private var requestedTimeout: RequestedWait { RequestedWait(option: timeout, default: Self.defaultTimeout) }

    /// The wait for the host as a `Duration` (``validate()`` has refused one that is not a
    /// positive number).
    package var deadline: Duration { requestedTimeout.duration }

    /// Rejects a missing endpoint and a timeout that is not positive, before any command runs.
    package func validate() throws {
        guard !controlEndpoint.isEmpty else {
            throw ValidationError(
                "no host endpoint: pass --control ENDPOINT (for example ipc:///run/user/1000/statebus/demo.control) or set STATEBUS_CONTROL")
        }
        try requestedTimeout.validate()
    }

    /// The object to bind, for the commands that need one (`objects` does not, so
    /// ``validate()`` cannot require it).
    /// - Throws: `ValidationError` when neither `--object` nor the environment names one.
    package func requireObject() throws -> String {
        guard !objectName.isEmpty else {
            throw ValidationError("no object: pass --object NAME or set STATEBUS_OBJECT (`statebus objects --control …` lists them)")
        }
        return objectName
    }
}
