import Foundation
import StateBus
import StateBusRuntime

/// The hosts, replicas and child processes of one test, and the temporary folder they use.
///
/// Everything started through a test system is ended when the system shuts down: child
/// processes get SIGTERM, then SIGKILL after a grace period, and are reaped; in-process hosts
/// stop; replicas close; the folder (its `ipc://` sockets and databases) is removed. Use it
/// through ``withTestSystem(_:isolation:_:)``, which shuts it down however the test ends:
/// returned, failed, thrown or cancelled.
///
/// ```swift
/// try await withTestSystem { system in
///     let host = try await system.startHost([counter])
///     let first = try await system.startView(of: "Counter", at: host.controlEndpoint, name: "first")
///     let second = try await system.startView(of: "Counter", at: host.controlEndpoint, name: "second")
///     try await first.set("count", to: 3)
///     try await system.waitUntilConverged(host.observed("Counter"), [first, second])
/// }
/// ```
///
/// Endpoints are `ipc://` paths in ``folder``: no fixed ports, nothing shared between tests
/// running in parallel. Thread safety: every method may be called from any task.
public final class TestSystem: Sendable {
    /// A temporary folder of this system's own, removed at shut-down.
    public let folder: String
    /// The `statebus` executable that process nodes run (see ``BuiltProducts``).
    public let statebus: URL
    /// How long child processes get to stop after SIGTERM before SIGKILL.
    public let gracePeriod: Duration

    private let owned = Locked(Owned())

    private struct Owned {
        var processes: [NodeProcess] = []
        var hosts: [StateHost] = []
        var replicas: [Replica] = []
        var cleanups: [@Sendable () -> Void] = []
        var isShutDown = false
    }

    /// Creates a system with a fresh temporary folder.
    /// - Parameters:
    ///   - name: a word for the folder's name, to tell systems apart in `/tmp`.
    ///   - statebus: the `statebus` executable for process nodes (default: the one built
    ///     next to the test bundle, or `$STATEBUS_BIN_DIR/statebus`).
    ///   - gracePeriod: how long processes get to stop on SIGTERM at shut-down.
    /// - Throws: when the folder cannot be created.
    public init(name: String = "test", statebus: URL? = nil, gracePeriod: Duration = .seconds(5)) throws {
        let safe = String(name.map { $0.isLetter || $0.isNumber ? $0 : "-" }.prefix(24))
        // Short: an ipc:// path must fit in 107 bytes.
        folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("sb-\(safe)-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        self.statebus = statebus ?? BuiltProducts.folder.appendingPathComponent("statebus")
        self.gracePeriod = gracePeriod
    }

    /// An `ipc://` endpoint in this system's folder.
    public func endpoint(_ name: String) -> String { "ipc://\(folder)/\(name)" }

    /// A path in this system's folder (for a database, a launch file).
    public func path(_ name: String) -> String { "\(folder)/\(name)" }

    /// The `statebus` executable, or a clear error when it has not been built.
    func statebusExecutable() throws -> URL {
        guard FileManager.default.isExecutableFile(atPath: statebus.path) else {
            throw BuiltProducts.MissingProduct(name: "statebus", folder: statebus.deletingLastPathComponent().path)
        }
        return statebus
    }

    // MARK: Ownership

    /// Starts a child process that this system ends at shut-down.
    /// - Parameters:
    ///   - executable: the program.
    ///   - arguments: its arguments.
    ///   - environment: variables added to this process's environment.
    ///   - name: a name for messages and timeouts.
    /// - Throws: when the program cannot be started, or the system is shut down.
    public func startProcess(executable: URL, arguments: [String], environment: [String: String] = [:], name: String) throws -> NodeProcess {
        try adopt(try NodeProcess(executable: executable, arguments: arguments, environment: environment, name: name))
    }

    /// Makes this system end `process` at shut-down.
    /// - Returns: the process.
    /// - Throws: ``TestSystemError`` when the system is already shut down (the process is
    ///   terminated then).
    @discardableResult
    public func adopt(_ process: NodeProcess) throws -> NodeProcess {
        try own {
            $0.processes.append(process)
        } orElse: {
            process.terminate(grace: .seconds(1))
        }
        return process
    }

    /// Makes this system stop `host` at shut-down.
    @discardableResult
    public func adopt(_ host: StateHost) throws -> StateHost {
        try own {
            $0.hosts.append(host)
        } orElse: {
            host.stop()
        }
        return host
    }

    /// Makes this system close `replica` at shut-down.
    @discardableResult
    public func adopt(_ replica: Replica) throws -> Replica {
        try own {
            $0.replicas.append(replica)
        } orElse: {
            replica.close()
        }
        return replica
    }

    /// Runs `cleanup` at shut-down, before processes are ended.
    public func onShutDown(_ cleanup: @escaping @Sendable () -> Void) throws {
        try own {
            $0.cleanups.append(cleanup)
        } orElse: {
            cleanup()
        }
    }

    private func own(_ record: (inout Owned) -> Void, orElse undo: () -> Void) throws {
        let accepted = owned.withLock { owned -> Bool in
            guard !owned.isShutDown else { return false }
            record(&owned)
            return true
        }
        if !accepted {
            undo()
            throw TestSystemError("the test system in \(folder) is already shut down: start nodes inside withTestSystem's closure")
        }
    }

    /// The process ids of every child process started so far, running or not.
    public var processIDs: [Int32] { owned.withLock { $0.processes.map(\.pid) } }

    /// Ends everything this system started, and removes its folder. Idempotent.
    ///
    /// Processes are all asked to stop (SIGTERM) first, then awaited one by one, each killed
    /// (SIGKILL) if it outlives ``gracePeriod``: shutting down N nodes takes one grace
    /// period at most, not N.
    public func shutDown() {
        let taken = owned.withLock { owned -> Owned in
            let taken = owned
            owned = Owned()
            owned.isShutDown = true
            return taken
        }
        for cleanup in taken.cleanups.reversed() { cleanup() }
        for replica in taken.replicas { replica.close() }
        for process in taken.processes where process.isRunning {
            process.signal(SIGCONT)
            process.signal(SIGTERM)
        }
        for process in taken.processes { process.terminate(grace: gracePeriod) }
        for host in taken.hosts { host.stop() }
        try? FileManager.default.removeItem(atPath: folder)
    }
}

/// Runs `body` with a fresh ``TestSystem`` and shuts the system down when `body` ends,
/// whether it returns, throws, or its task is cancelled. The shut-down, which waits for
/// processes to end, runs on a thread of its own: on the threads that run every task, it
/// held back other tests' tasks for seconds.
/// - Parameters:
///   - name: names the temporary folder (default: the calling function).
///   - isolation: the caller's isolation, inherited by `body`.
///   - body: the test.
/// - Returns: what `body` returns.
/// - Throws: what `body` throws, or an error when the folder cannot be created.
public func withTestSystem<Result>(
    _ name: String = #function, isolation: isolated (any Actor)? = #isolation,
    _ body: (TestSystem) async throws -> Result
) async throws -> Result {
    let system = try TestSystem(name: name)
    do {
        let result = try await body(system)
        await onThreadOfItsOwn { system.shutDown() }
        return result
    } catch {
        await onThreadOfItsOwn { system.shutDown() }
        throw error
    }
}

/// A misuse of a ``TestSystem``, with what to do.
public struct TestSystemError: Error, Sendable, CustomStringConvertible {
    /// What went wrong and what to do.
    public let description: String
    /// Creates an error with its message.
    public init(_ description: String) { self.description = description }
}
