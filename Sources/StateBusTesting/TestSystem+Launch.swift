import Foundation
import StateBus
import StateBusRuntime

/// A launch file running under a ``TestSystem``: its nodes, its prefixed output, and a stop.
public final class LaunchedTopology: Sendable {
    /// The launcher that runs it.
    public let launcher: Launcher
    private let run: Task<Int32, any Error>
    private let stopSignal: AsyncStream<Void>.Continuation
    private let log: LineLog

    init(launcher: Launcher, log: LineLog, run: Task<Int32, any Error>, stopSignal: AsyncStream<Void>.Continuation) {
        self.launcher = launcher
        self.log = log
        self.run = run
        self.stopSignal = stopSignal
    }

    /// Every line the launcher printed: its own events and each node's lines as `name | line`.
    public var output: [String] { log.lines.withLock { $0 } }

    /// The running process of a node, waiting until the launcher has started it.
    /// - Throws: ``WaitTimeout`` when the node does not start in time.
    public func node(_ name: String, timeout: Duration = .seconds(120)) async throws -> NodeProcess {
        let launcher = self.launcher
        try await waitUntil(
            "node \(name) of launch '\(launcher.file.name)' to start", timeout: timeout,
            lastSeen: { [self] in output.suffix(10).joined(separator: "\n") }
        ) {
            launcher.process(named: name) != nil
        }
        guard let process = launcher.process(named: name) else { throw LaunchError("node \(name) is not running") }
        return process
    }

    /// Stops every node gracefully (views first) and returns the launcher's exit code:
    /// 0 when no node failed.
    /// - Throws: what the launcher threw while starting (a host that never answered).
    @discardableResult
    public func stop() async throws -> Int32 {
        stopSignal.finish()
        return try await run.value
    }
}

extension TestSystem {
    /// Runs a launch file's topology, as `statebus launch` would: hosts first, views once
    /// their host answers. Executables named `statebus` run the built `statebus`. Stopped
    /// at shut-down, if the test has not stopped it.
    /// - Parameters:
    ///   - yaml: the launch file's text (write `ipc://` endpoints under ``folder``, or leave
    ///     `control` out for a default in the runtime folder).
    ///   - name: a file name for error messages.
    /// - Returns: the running topology.
    /// - Throws: ``LaunchFileError`` (file, line, field) for a malformed file.
    public func launch(yaml: String, name: String = "launch.yaml") throws -> LaunchedTopology {
        let file = path(name)
        try yaml.write(toFile: file, atomically: true, encoding: .utf8)
        return try launch(LaunchFile.load(path: file))
    }

    /// Runs a parsed launch file; see ``launch(yaml:name:)``.
    public func launch(_ file: LaunchFile) throws -> LaunchedTopology {
        let log = LineLog()
        let (stopped, stopSignal) = AsyncStream<Void>.makeStream()
        let launcher = Launcher(file: file, statebus: try statebusExecutable(), readiness: Self.hostAnswers) { line in
            log.lines.withLock { $0.append(line) }
        }
        let run = Task { try await launcher.run(until: { for await _ in stopped {} }) }
        let topology = LaunchedTopology(launcher: launcher, log: log, run: run, stopSignal: stopSignal)
        try onShutDown {
            stopSignal.finish()
            launcher.shutDown()
        }
        return topology
    }

    /// The readiness check `statebus launch` makes: the host describes itself on its control
    /// endpoint.
    static let hostAnswers: HostReadiness = { endpoint, timeout in
        if let file = LaunchKeys.hostPublicKeyFile {
            try await HostDescription.probeHandshake(
                controlEndpoint: endpoint, hostPublicKey: try CurveKeyFile.loadPublic(at: file), timeout: timeout)
        } else {
            _ = try await HostDescription.fetch(controlEndpoint: endpoint, timeout: timeout)
        }
    }
}

/// The lines a launcher printed, shared between its output callback and the topology.
final class LineLog: Sendable {
    let lines = Locked<[String]>([])
}
