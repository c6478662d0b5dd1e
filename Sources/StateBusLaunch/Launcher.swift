import Foundation
import StateBusRuntime

/// Runs a ``LaunchFile``: hosts first, then relays in file order, each once its upstream
/// answers, then views; every node's lines prefixed with its name, respawn policies, and a
/// graceful stop.
///
/// The launcher injects each node's environment, the cross-process `environmentObject`:
/// `STATEBUS_NODE` (its name), `STATEBUS_ROLE`, `STATEBUS_OBJECTS` (its objects),
/// `STATEBUS_CONTROL` (the control endpoint of the host or relay a view joins; for a host or
/// relay, the endpoint to bind) and, for a relay, `STATEBUS_UPSTREAM`; see
/// ``NodeEnvironment``. Whether a host answers is the injected ``HostReadiness`` check's
/// call: the launcher supervises processes and knows nothing of the protocol.
///
/// Thread safety: every method may be called from any task; ``shutDown()`` blocks its caller
/// until every node has stopped.
public final class Launcher: Sendable {
    /// The topology.
    public let file: LaunchFile
    private let statebus: URL
    private let readiness: HostReadiness
    private let output: @Sendable (String) -> Void
    private let state = Locked(State())

    private struct State {
        var running: [String: NodeProcess] = [:]
        var failures: [String] = []
        var stopping = false
        /// A host exited failed with no restart left: the set stops (see ``run(until:)``).
        var hostDiedForGood = false
    }

    /// Prepares a launch; nothing starts until ``run(until:)``.
    /// - Parameters:
    ///   - file: the topology.
    ///   - statebus: what the executable name `statebus` means (default: this binary).
    ///   - readiness: returns once a host answers on its control endpoint; views start
    ///     only after their host passed it.
    ///   - output: receives every prefixed line, and the launcher's own messages.
    public init(
        file: LaunchFile, statebus: URL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath(),
        readiness: @escaping HostReadiness, output: @escaping @Sendable (String) -> Void
    ) {
        self.file = file
        self.statebus = statebus
        self.readiness = readiness
        self.output = output
    }

    /// The control endpoint a host or relay node binds.
    public func controlEndpoint(of host: LaunchFile.Node) -> String {
        host.control ?? "ipc://\(RuntimeFolder.path)/\(file.name)-\(host.name).control"
    }

    /// The node of this file a view joins or a relay relays: the one it names, else the only
    /// candidate (the only host or relay for a view, the only host for a relay).
    func server(of node: LaunchFile.Node) -> LaunchFile.Node? {
        if let name = node.host { return file.nodes.first { $0.name == name } }
        switch node.role {
        case .host: return nil
        case .relay:
            guard node.upstream == nil else { return nil }
            let hosts = file.nodes.filter { $0.role == .host }
            return hosts.count == 1 ? hosts[0] : nil
        case .view:
            guard node.control == nil else { return nil }
            let servers = file.nodes.filter(\.role.serves)
            return servers.count == 1 ? servers[0] : nil
        }
    }

    /// The control endpoint a view joins or a relay relays: a node of this file, the file's
    /// `control:`/`upstream:`, or the launcher's own `STATEBUS_CONTROL`/`STATEBUS_UPSTREAM`.
    /// - Throws: ``LaunchError`` when none of them says.
    func joinedEndpoint(of node: LaunchFile.Node) throws -> String? {
        if node.role == .host { return nil }
        if let server = server(of: node) { return controlEndpoint(of: server) }
        // A group's hosts: the view follows whichever leads.
        if node.role == .view, node.host == nil, node.control == nil, file.highAvailability != nil {
            let hosts = file.nodes.filter { $0.role == .host }
            if !hosts.isEmpty { return hosts.map(controlEndpoint(of:)).joined(separator: ",") }
        }
        let environment = ProcessInfo.processInfo.environment
        let (given, variable) =
            node.role == .relay
            ? (node.upstream, EnvironmentVariableName.upstream) : (node.control, EnvironmentVariableName.control)
        if let given { return given }
        if let inherited = environment[variable], !inherited.isEmpty { return inherited }
        let field = node.role == .relay ? "upstream:" : "control:"
        throw LaunchError(
            "\(file.path):\(node.line): \(node.role.rawValue) '\(node.name)' has nothing to join: name a node of the file with host:, give \(field), or set \(variable) for the launcher"
        )
    }

    /// The running process of a node, if it runs.
    public func process(named name: String) -> NodeProcess? { state.withLock { $0.running[name] } }

    /// Starts the topology and supervises it until `stop` returns, every node has ended, or
    /// a host has died for good.
    ///
    /// A host dies for good when it exits failed and its respawn policy will not restart it
    /// (`never`, or its `max` restarts used). Its views could only show stale state from
    /// then on, so the launcher stops every node and returns 1: a supervisor (systemd's
    /// `Restart=on-failure`) then restarts the whole set.
    /// - Parameter stop: returns when the launch should stop (for example on SIGTERM). When
    ///   the launch ends first, it is cancelled, not awaited.
    /// - Returns: 0 when no node failed, 1 otherwise.
    /// - Throws: ``LaunchError`` when an executable is missing or a host never answers;
    ///   every node started is stopped first.
    public func run(until stop: @escaping @Sendable () async -> Void) async throws -> Int32 {
        let executables = try resolveExecutables()
        do {
            for node in file.nodes where node.role != .host { _ = try joinedEndpoint(of: node) }
            for node in file.nodes where node.role == .host {
                try start(node, executable: executables[node.name]!)
                try await awaitReady(node)
            }
            // In file order, each after its upstream (which the file lists before it).
            for node in file.nodes where node.role == .relay {
                try start(node, executable: executables[node.name]!)
                try await awaitReady(node)
            }
            for node in file.nodes where node.role == .view {
                try start(node, executable: executables[node.name]!)
            }
        } catch {
            shutDown()
            throw error
        }
        // Not a child of the group below: `stop` need not answer cancellation (a signal wait
        // does not), and the group must be able to end without it when every node ended or a
        // host died for good. Its shutDown ends every node, so the supervisors return.
        let stopper = Task {
            await stop()
            self.shutDown()
        }
        defer { stopper.cancel() }
        await withTaskGroup(of: Void.self) { group in
            for node in file.nodes {
                group.addTask { await self.supervise(node, executable: executables[node.name]!) }
            }
            // Whichever comes first: every node ended on its own, the stop signal, or a host
            // that died for good.
            while await group.next() != nil {
                if state.withLock({ $0.stopping || $0.hostDiedForGood }) { break }
            }
            shutDown()
            group.cancelAll()
        }
        let failures = state.withLock { $0.failures }
        for failure in failures { output("launch: \(failure)") }
        return failures.isEmpty ? 0 : 1
    }

    private func resolveExecutables() throws -> [String: URL] {
        var resolved: [String: URL] = [:]
        let folder = URL(fileURLWithPath: file.path).deletingLastPathComponent()
        for node in file.nodes {
            let candidate: URL?
            if node.executable == "statebus" {
                candidate = statebus
            } else if node.executable.contains("/") {
                candidate = node.executable.hasPrefix("/") ? URL(fileURLWithPath: node.executable) : folder.appendingPathComponent(node.executable)
            } else {
                candidate = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
                    .map { URL(fileURLWithPath: String($0)).appendingPathComponent(node.executable) }
                    .first { FileManager.default.isExecutableFile(atPath: $0.path) }
            }
            guard let url = candidate, FileManager.default.isExecutableFile(atPath: url.path) else {
                throw LaunchError("\(file.path):\(node.line): node '\(node.name)': executable '\(node.executable)' not found or not executable")
            }
            resolved[node.name] = url
        }
        return resolved
    }

    private func environment(for node: LaunchFile.Node) -> [String: String] {
        let server = server(of: node)
        let joined = try? joinedEndpoint(of: node)
        let injected: [String: String]
        switch node.role {
        case .host:
            injected = NodeEnvironment.variables(
                name: node.name, role: node.role, objects: node.objects, control: controlEndpoint(of: node),
                highAvailability: file.highAvailability)
        case .relay:
            injected = NodeEnvironment.variables(
                name: node.name, role: node.role, objects: node.objects, control: controlEndpoint(of: node), upstream: joined)
        case .view:
            injected = NodeEnvironment.variables(name: node.name, role: node.role, objects: node.objects, control: joined)
        }
        let keys = LaunchKeys.variables(for: node, host: node.role == .host ? node : server)
        return node.environment.merging(injected.merging(keys) { $1 }) { _, injected in injected }
    }

    private func start(_ node: LaunchFile.Node, executable: URL) throws {
        let output = self.output
        let name = node.name
        let process = try NodeProcess(
            executable: executable, arguments: node.arguments, environment: environment(for: node),
            name: name, onLine: { line in output("\(name) | \(line)") })
        state.withLock { $0.running[name] = process }
        output("launch: started \(name) (\(node.role.rawValue), pid \(process.pid))")
    }

    private func awaitReady(_ host: LaunchFile.Node) async throws {
        let endpoint = controlEndpoint(of: host)
        do {
            try await LaunchKeys.$hostPublicKeyFile.withValue(LaunchKeys.publicKeyFile(of: host)) {
                try await readiness(endpoint, .milliseconds(Int(file.readyTimeout * 1000)))
            }
            output("launch: \(host.name) answers on \(endpoint)")
        } catch {
            let lines = process(named: host.name)?.output.suffix(10).joined(separator: "\n  ") ?? ""
            throw LaunchError("host '\(host.name)' did not answer on \(endpoint) within \(file.readyTimeout) s; its last lines:\n  \(lines)")
        }
    }

    /// Waits for a node's exits and applies its respawn policy.
    private func supervise(_ node: LaunchFile.Node, executable: URL) async {
        var restarts = 0
        while let process = process(named: node.name) {
            let status = await process.exitStatus()
            if state.withLock({ $0.stopping }) || Task.isCancelled { return }
            let failed = status != 0
            let policy = node.respawn
            let wantsRestart = policy.policy == .always || (policy.policy == .onFailure && failed)
            if wantsRestart, restarts < (policy.maximum ?? Int.max) {
                restarts += 1
                output(
                    "launch: \(node.name) exited with status \(status); restarting (\(restarts) of \(policy.maximum.map(String.init) ?? "unlimited"))"
                )
                try? await Task.sleep(for: .milliseconds(Int(policy.delay * 1000)))
                if state.withLock({ $0.stopping }) { return }
                do { try process.start() } catch {
                    state.withLock { $0.failures.append("\(node.name) could not be restarted: \(error)") }
                    if node.role.serves { diedForGood(node, because: "it could not be restarted: \(error)") }
                    return
                }
                output("launch: started \(node.name) (\(node.role.rawValue), pid \(process.pid))")
                continue
            }
            output("launch: \(node.name) exited with status \(status)")
            if failed { state.withLock { $0.failures.append("\(node.name) failed with exit status \(status)") } }
            if failed, node.role.serves {
                let policyText =
                    policy.policy == .never
                    ? "its respawn policy is never"
                    : "its respawn policy \(policy.policy.rawValue) gave up after \(restarts) restarts"
                diedForGood(node, because: "it exited with \(Self.describe(status: status)) and \(policyText)")
            }
            return
        }
    }

    /// Records that a host or relay will not come back and says so; ``run(until:)`` then
    /// stops the set.
    private func diedForGood(_ host: LaunchFile.Node, because reason: String) {
        let alreadyStopping = state.withLock { state -> Bool in
            state.hostDiedForGood = true
            return state.stopping
        }
        guard !alreadyStopping else { return }
        output(
            "launch: \(host.role.rawValue) '\(host.name)' died for good: \(reason); stopping the set and exiting 1 "
                + "so that a supervisor (systemd Restart=on-failure) restarts it")
    }

    /// `exit status 1`, or `exit status 137 (signal 9)` for a process ended by a signal.
    static func describe(status: Int32) -> String {
        status > 128 ? "exit status \(status) (signal \(status - 128))" : "exit status \(status)"
    }

    /// Stops every node: views first, then hosts, each group with SIGTERM, then SIGKILL
    /// after the grace period. Views go first so their goodbyes reach a host that still
    /// runs, and no view sees its host vanish and starts reconnecting while it stops.
    public func shutDown() {
        let (views, hosts) = state.withLock { state -> ([NodeProcess], [NodeProcess]) in
            guard !state.stopping else { return ([], []) }
            state.stopping = true
            // Relays stop with the hosts: after every view, so no view sees them vanish.
            return (
                file.nodes.filter { $0.role == .view }.compactMap { state.running[$0.name] },
                file.nodes.filter(\.role.serves).compactMap { state.running[$0.name] }
            )
        }
        guard !views.isEmpty || !hosts.isEmpty else { return }
        output("launch: stopping \(views.count + hosts.count) nodes")
        let grace = Duration.milliseconds(Int(file.gracePeriod * 1000))
        for group in [views, hosts] {
            for process in group where process.isRunning { process.signal(SIGTERM) }
            for process in group { process.terminate(grace: grace) }
        }
    }
}
