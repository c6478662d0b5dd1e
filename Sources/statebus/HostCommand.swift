import ArgumentParser
import Foundation
import StateBus
import StateBusCommandLine
import StateBusHA
import StateBusPrometheus
import StateBusRuntime
import StateBusWire

/// `statebus host`: serves the objects whose properties are given on the command line.
struct HostCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "host",
        abstract: "Run a host that serves the objects declared on the command line.",
        usage: """
            statebus host --object NAME [--property NAME:KIND[=DEFAULT] ...] [--object NAME [--property ...] ...] [<options>]
            """,
        discussion: """
            Each --object declares an object; each --property after it declares a property of \
            that object, until the next --object. An object may have no properties. A \
            --property before any --object belongs to $STATEBUS_OBJECT (else the first of \
            $STATEBUS_OBJECTS), as the launcher injects; without either it is refused.

            Each --property is NAME:KIND[=DEFAULT], KIND one of bool, int, double, string, any \
            (any: a JSON value of any shape). A string default is taken as is; other defaults \
            are JSON. Append ! to the kind to make the property read-only for views, ~ to make \
            the host keep it durable across restarts (both: !~). \
            Prints "ready control=… updates=… epoch=…" once it serves, and stops on SIGINT or SIGTERM.

            Examples:
              statebus host --object SharedData --property sharedText:string=hello
              statebus host --object Counter --property count:int=0 --object Settings --property theme:string=light --object Empty
              statebus host --control tcp://0.0.0.0:7000 --object Counter --property count:int=0 --property label:string!=fixed
              statebus host --object Settings --property notifications:bool~=true --database /var/lib/app/settings.sqlite
              statebus host --control tcp://0.0.0.0:7000 --updates tcp://0.0.0.0:7001 --advertise tcp://192.0.2.7:7001 --insecure --object Counter --property count:int=0
              statebus host --control tcp://0.0.0.0:7000 --key host.key --authorized authorized.keys --object Counter --property count:int=0
              statebus host --object Counter --property count:int=0 --metrics 127.0.0.1:9464   # Prometheus scrapes /metrics
              statebus host --object Counter --property count:int=0 --pin-cpu 0   # low latency, with views run --pin-cpu 0
              statebus host --object Counter --property count:int=0 --busy-poll-us 0   # never poll: CPU before latency

            With --ha, the host joins a high-availability group: etcd elects one leader among \
            the group's hosts, which serves; the others stand by, follow it, refuse views with \
            NOT_LEADER naming it, and take over when its lease runs out. Persisted properties \
            live in etcd. Prints "role leader epoch=… term=…" or "role standby leader=…" at \
            every change. Views list every host: --control tcp://a:7000,tcp://b:7000.
              statebus host --ha http://127.0.0.1:2379 --ha-group counters --control tcp://10.0.0.7:7000 --insecure --object Counter --property count:int~=0

            A tcp endpoint, loopback included (every user of the machine reaches it), needs \
            --key and --authorized (or --insecure). With keys, SIGHUP re-reads the authorized keys file.
            """
    )

    @Option(name: .long, help: "The control endpoint to bind (default: $STATEBUS_CONTROL, else ipc:// in the runtime folder).")
    var control: String?

    @Option(name: .long, help: "The updates endpoint to bind (default: derived from the control endpoint).")
    var updates: String?

    @Option(name: .long, help: "The updates endpoint to announce to views, when it differs from the bound one (NAT, another machine's address).")
    var advertise: String?

    /// `--object NAME` and `--property NAME:KIND[=DEFAULT]`, in order (``ObjectDeclarations``):
    /// how they interleave says which object each property belongs to.
    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp(
            "--object NAME, then that object's --property NAME:KIND[=DEFAULT] options; repeat for each object.",
            valueName: "--object NAME --property NAME:KIND[=DEFAULT]"))
    var declarations: [String] = []

    @Option(name: .long, help: "The host's name (default endpoints derive from it).")
    var name: String = "statebus"

    @Option(name: .long, help: "Heartbeat interval in milliseconds; 0 turns heartbeats off.")
    var heartbeatMs: Int = 500

    @Option(
        name: .long,
        help: ArgumentHelp(
            "How long the host keeps polling instead of sleeping after it handled writes, in microseconds; 0: it always sleeps.",
            discussion:
                "A writer usually writes again within a round trip, and a sleeping thread takes tens of microseconds to wake on an idle CPU. Costs at most this much CPU per turn that handled writes; 0 saves it on a machine where CPU matters more than latency."
        ))
    var busyPollUs: Int = 100

    @Flag(name: .long, help: "Print the object's state as a JSON line after every change.")
    var printChanges = false

    @Option(name: .long, help: "The database for persisted properties (default: <state folder>/statebus/<name>.sqlite).")
    var database: String?

    @Option(name: .long, help: "How long a commit waits for another process's lock on the database before its writes fail, in milliseconds.")
    var databaseLockTimeoutMs: Int = 2000

    @Flag(name: .long, help: "Run without persistence: persisted properties start from their defaults.")
    var noPersistence = false

    @OptionGroup(title: "High availability") var highAvailability: HighAvailabilityOptions
    @OptionGroup var security: HostSecurityOptions
    @OptionGroup var metrics: MetricsOptions
    @OptionGroup var lowLatency: LowLatencyOptions

    func validate() throws {
        _ = try objectDefinitions()
        guard heartbeatMs >= 0 else { throw ValidationError("--heartbeat-ms must be 0 or more, got \(heartbeatMs)") }
        guard (0...1_000_000).contains(busyPollUs) else {
            throw ValidationError("--busy-poll-us must be 0 to 1000000 microseconds, got \(busyPollUs)")
        }
        guard databaseLockTimeoutMs >= 0 else {
            throw ValidationError("--database-lock-timeout-ms must be 0 or more, got \(databaseLockTimeoutMs)")
        }
    }

    /// The objects the command line declares, with their properties.
    /// - Throws: `ValidationError` for a declaration or a property that cannot be read.
    func objectDefinitions() throws -> [ObjectDefinition] {
        let declared = try ObjectDeclarations(declarations, injectedObject: ConnectionOptions.injectedObject)
        return try declared.objects.map { object in
            ObjectDefinition(object.name, properties: try object.properties.map(Self.parseProperty))
        }
    }

    /// Reads one `--property NAME:KIND[=DEFAULT]` (`!` after the kind: read-only, `~`:
    /// persisted).
    /// - Throws: `ValidationError` naming the specification and what is wrong with it.
    static func parseProperty(_ spec: String) throws -> PropertyDefinition {
        let (head, defaultText): (Substring, String?) = {
            guard let equals = spec.firstIndex(of: "=") else { return (spec[...], nil) }
            return (spec[..<equals], String(spec[spec.index(after: equals)...]))
        }()
        let parts = head.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, !parts[0].isEmpty else {
            throw ValidationError("--property '\(spec)': expected NAME:KIND[=DEFAULT], for example count:int=0")
        }
        var kindText = String(parts[1])
        var readOnly = false
        var persisted = false
        while let last = kindText.last, last == "!" || last == "~" {
            if last == "!" { readOnly = true } else { persisted = true }
            kindText.removeLast()
        }
        let kind: ValueKind?
        let fallback: Value
        switch kindText {
        case "bool": (kind, fallback) = (.bool, .bool(false))
        case "int": (kind, fallback) = (.int, .int(0))
        case "double": (kind, fallback) = (.double, .double(0))
        case "string": (kind, fallback) = (.string, .string(""))
        case "any": (kind, fallback) = (nil, .null)
        default: throw ValidationError("--property '\(spec)': unknown kind '\(kindText)'; use bool, int, double, string or any")
        }
        var defaultValue = fallback
        if let defaultText {
            do {
                defaultValue = try ValueText.parse(defaultText, asString: kind == .string)
            } catch {
                throw ValidationError("--property '\(spec)': \(error)")
            }
            if let kind, defaultValue.kind != kind, !(kind == .double && defaultValue.kind == .int) {
                throw ValidationError("--property '\(spec)': the default \(defaultValue) is not a \(kind)")
            }
        }
        return PropertyDefinition(String(parts[0]), kind: kind, default: defaultValue, writable: !readOnly, persisted: persisted)
    }

    func run() async throws {
        let stop = SignalTrap.stopSignals()
        let metricsEndpoint = try metrics.endpoint()
        let definitions = try objectDefinitions()
        var configuration = HostConfiguration(
            name: name,
            controlEndpoint: control ?? ProcessInfo.processInfo.environment[EnvironmentVariableName.control],
            updatesEndpoint: updates,
            heartbeatInterval: heartbeatMs == 0 ? nil : .milliseconds(heartbeatMs),
            persistence: noPersistence ? .disabled : database.map(Persistence.file) ?? .automatic
        )
        configuration.databaseLockTimeout = .milliseconds(databaseLockTimeoutMs)
        configuration.advertisedUpdatesEndpoint = advertise
        configuration.pinnedCPU = lowLatency.pinCpu
        configuration.busyPollingAfterWrites = .microseconds(busyPollUs)
        try security.apply(to: &configuration)
        if let group = try highAvailability.highAvailability() {
            guard !printChanges, database == nil else {
                throw ValidationError("--ha keeps persisted properties in etcd and has no --print-changes: leave out --database and --print-changes")
            }
            try await runInGroup(group, objects: definitions, configuration: configuration, metrics: metricsEndpoint, stoppingOn: stop)
            return
        }
        let host = try await StateHost(objects: definitions, configuration: configuration)
        let hangups = HangupTrap.reloadingKeys(of: host, when: configuration.security != nil)
        defer { withExtendedLifetime(hangups) {} }
        emit("ready control=\(host.controlEndpoint) updates=\(host.updatesEndpoint) epoch=\(host.epoch)")
        let printers = (printChanges ? definitions.map(\.name) : []).map { object in
            Task {
                for await _ in host.changes(of: object) {
                    let sequence = host.sequence(of: object) ?? 0
                    emit(
                        #"{"epoch":\#(host.epoch),"object":\#(ValueText.json(.string(object))),"sequence":\#(sequence),"values":\#(ValueText.json(host.values(of: object) ?? [:]))}"#
                    )
                }
            }
        }
        metrics.announce(metricsEndpoint)
        try await runServices([host] + [metricsEndpoint].compactMap { $0 }, stoppingOn: stop)
        for printer in printers { printer.cancel() }
        emit("stopped")
    }

    /// Serves as a host of a high-availability group until SIGINT or SIGTERM, printing its
    /// role at every change.
    private func runInGroup(
        _ group: HighAvailability, objects: [ObjectDefinition], configuration: HostConfiguration, metrics endpoint: MetricsEndpoint?,
        stoppingOn stop: SignalTrap
    ) async throws {
        let host = try await HighAvailabilityHost(objects: objects, configuration: configuration, highAvailability: group)
        let hangups = HangupTrap.reloadingKeys(when: configuration.security != nil) { try await host.reloadAuthorizedKeys() }
        defer { withExtendedLifetime(hangups) {} }
        emit("ready control=\(host.announcedControlEndpoint) updates=\(host.updatesEndpoint) group=\(host.group)")
        let printer = Task {
            for await role in host.roleChanges() { emit("role \(role)") }
        }
        if let endpoint {
            metrics.announce(endpoint)
            try await runServices([endpoint], stoppingOn: stop)
        } else {
            await stop.wait()
        }
        await host.stop()
        printer.cancel()
        emit("stopped")
    }
}
