import ArgumentParser
import Foundation
import StateBus
import StateBusCommandLine
import StateBusRuntime

/// `statebus relay`: relays the objects of a host (or of another relay) to views of its own.
struct RelayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay",
        abstract: "Relay a host's objects to views of its own, so the host serves one connection instead of many.",
        discussion: """
            The relay joins its upstream (a host or another relay) as a view, keeps a copy of \
            every object it relays, republishes each publication unchanged, answers hellos and \
            snapshots from its copy and forwards writes upstream. Views connect to the relay's \
            --control exactly as they would to the host. Prints "ready control=… updates=… \
            upstream=…" once it holds every object, and stops on SIGINT or SIGTERM.

            Examples:
              statebus relay --upstream ipc:///run/app/host.control --control ipc:///run/app/relay1.control
              statebus relay --upstream tcp://10.0.0.1:7000 --control ipc:///run/app/relay.control --object SharedData
              statebus relay --upstream ipc:///run/app/relay1.control --control ipc:///run/app/relay2.control   # a relay of a relay
              statebus relay --upstream tcp://10.0.0.1:7000,tcp://10.0.0.2:7000 --key relay.key --host-key group.pub --control ipc:///run/app/relay.control   # follows a group's leader
              statebus relay --upstream tcp://10.0.0.1:7000 --key relay.key --host-key host.pub --control tcp://0.0.0.0:7100 --authorized relay-views.keys

            With keys: --key is the relay's key pair (`statebus keygen relay`); --host-key the \
            upstream's public key, which must list the relay's key with the role relay \
            (`relay PUBLIC-KEY NAME`); --authorized the keys this relay admits, as a host's. A \
            tcp address, loopback included (every user of the machine reaches it), needs --key \
            and --authorized (or --insecure).
            """
    )

    @Option(
        name: .long,
        help:
            "The control endpoint of the host or relay to relay, or a high-availability group's hosts separated by commas (default: $STATEBUS_UPSTREAM)."
    )
    var upstream: String?

    @Option(name: .long, help: "The control endpoint to bind for views (default: $STATEBUS_CONTROL, else ipc:// in the runtime folder).")
    var control: String?

    @Option(name: .long, help: "The updates endpoint to bind (default: derived from the control endpoint).")
    var updates: String?

    @Option(name: .long, help: "The updates endpoint to announce to views, when it differs from the bound one (NAT, another machine).")
    var advertise: String?

    @Option(name: .long, help: "An object to relay; repeat for more (default: every object the upstream serves).")
    var object: [String] = []

    @Option(name: .long, help: "The relay's name, for logs and its welcome (default endpoints derive from it).")
    var name: String = "relay"

    @Option(name: .long, help: "How long to wait for the upstream before giving up at start, in seconds (0: wait forever).")
    var startTimeout: Int = 0

    @Option(name: .long, help: "The relay's CURVE secret key file, for both sides (default: $STATEBUS_KEY_FILE).")
    var key: String?

    @Option(name: .long, help: "The upstream's public key file or Z85 key, when it has keys (default: $STATEBUS_HOST_KEY_FILE).")
    var hostKey: String?

    @Option(name: .long, help: "The keys this relay admits: ROLE PUBLIC-KEY NAME per line (default: $STATEBUS_AUTHORIZED_KEYS_FILE).")
    var authorized: String?

    @Flag(name: .long, help: "Serve a tcp address without keys, loopback included (anyone who reaches it reads and writes).")
    var insecure = false

    @OptionGroup var metrics: MetricsOptions

    /// The relay's keys: towards its upstream (`--key` with `--host-key`) and towards its
    /// views (`--key` with `--authorized`).
    func applyKeys(to configuration: inout RelayConfiguration) throws {
        let environment = ProcessInfo.processInfo.environment
        let keyFile = key ?? environment[EnvironmentVariableName.keyFile]
        let hostKeyFile = hostKey ?? environment[EnvironmentVariableName.hostKeyFile]
        let authorizedFile = authorized ?? environment[EnvironmentVariableName.authorizedKeysFile]
        guard let keyFile else {
            if hostKeyFile != nil || authorizedFile != nil {
                throw ValidationError("--host-key and --authorized need --key too: the relay's secret key file (`statebus keygen relay` makes one)")
            }
            return
        }
        guard hostKeyFile != nil || authorizedFile != nil else {
            throw ValidationError(
                "--key needs --host-key (the upstream's public key: the upstream has keys) and/or --authorized (the keys this relay admits)")
        }
        do {
            if let hostKeyFile { configuration.upstreamSecurity = try ReplicaSecurity(keyFile: keyFile, hostKey: hostKeyFile) }
            if let authorizedFile { configuration.security = try HostSecurity(keyFile: keyFile, authorizedKeysFile: authorizedFile) }
        } catch {
            throw ValidationError("\(error)")
        }
    }

    func validate() throws {
        guard upstream ?? ProcessInfo.processInfo.environment[EnvironmentVariableName.upstream] != nil else {
            throw ValidationError(
                "no upstream: pass --upstream ENDPOINT (the host's control endpoint, for example ipc:///run/app/host.control) or set STATEBUS_UPSTREAM"
            )
        }
        guard startTimeout >= 0 else { throw ValidationError("--start-timeout must be 0 or more, got \(startTimeout)") }
    }

    func run() async throws {
        let stop = SignalTrap.stopSignals()
        let metricsEndpoint = try metrics.endpoint()
        let environment = ProcessInfo.processInfo.environment
        guard let upstream = upstream ?? environment[EnvironmentVariableName.upstream] else { throw ExitCode(2) }
        var configuration = RelayConfiguration(
            upstream: upstream, name: name, controlEndpoint: control ?? environment[EnvironmentVariableName.control], updatesEndpoint: updates,
            objects: object)
        configuration.advertisedUpdatesEndpoint = advertise
        configuration.allowsInsecureNetwork = insecure
        try applyKeys(to: &configuration)
        let relay = try await StateRelay(configuration: configuration)
        let ready = Task {
            try await relay.waitUntilSynced(timeout: startTimeout == 0 ? .seconds(86_400 * 365) : .seconds(startTimeout))
            emit("ready control=\(relay.controlEndpoint) updates=\(relay.updatesEndpoint) upstream=\(upstream)")
        }
        let giveUp = Task { [startTimeout] in
            do {
                try await ready.value
            } catch is CancellationError {
            } catch {
                FileHandle.standardError.write(
                    Data(
                        "statebus relay: the upstream at \(upstream) did not answer within \(startTimeout) s (--start-timeout): is its host running?\n"
                            .utf8))
                relay.stop()
                Foundation.exit(1)
            }
        }
        metrics.announce(metricsEndpoint)
        try await runServices([relay] + [metricsEndpoint].compactMap { $0 }, stoppingOn: stop)
        ready.cancel()
        giveUp.cancel()
        emit("stopped (\(relay.statistics))")
    }
}
