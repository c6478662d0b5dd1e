import Foundation
import Logging
import StateBusEtcd
import StateBusLaunch
import StateBusRuntime

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real single-member etcd for tests, on a free loopback port, in a temporary folder of its
/// own (its data directory and working directory), with flags tuned for a busy CI machine.
///
/// ```swift
/// try await EtcdTestServer.withEtcd(logger: logger) { etcd in
///     let client = try EtcdClient(endpoints: [etcd.endpoint], logger: logger)
///     …
///     etcd.pause()   // etcd stops answering, as under a partition
///     …
///     await client.shutdown()
/// }
/// ```
///
/// ``withEtcd(etcdPath:logger:_:)`` stops the server whatever the body does; a test that starts
/// one with ``start(etcdPath:logger:)`` must call ``stop()`` itself. Signals go to the
/// server's own pid only.
///
/// Thread safety: every method may be called from any task.
final class EtcdTestServer: Sendable {
    /// The client URL, `http://127.0.0.1:PORT`.
    let endpoint: String
    /// The etcd process's id.
    let pid: Int32
    /// The temporary folder holding the data directory and `etcd.log`; removed by ``stop()``.
    let directory: URL
    private let process: NodeProcess
    private let stopped = Locked(false)
    private let logger: Logger

    /// Why a test server could not start.
    struct StartError: Error, CustomStringConvertible {
        /// What went wrong, with etcd's log when there is one.
        public let description: String
    }

    /// How long etcd has to become healthy.
    static let readyTimeout = Duration.seconds(60)
    /// How many fresh ports are tried when the picked one was taken in the meantime.
    static let portAttempts = 5

    private init(endpoint: String, process: NodeProcess, directory: URL, logger: Logger) {
        self.endpoint = endpoint
        pid = process.pid
        self.process = process
        self.directory = directory
        self.logger = logger
    }

    /// Starts etcd and waits until it is healthy (`GET /health` says `{"health":"true"}`).
    /// - Parameters:
    ///   - etcdPath: the etcd binary (Debian's `etcd-server` package installs `/usr/bin/etcd`).
    ///   - logger: where the server's start and stop are logged.
    /// - Returns: the running server.
    /// - Throws: ``StartError`` with etcd's log when it exits or is not healthy within 10 s.
    static func start(etcdPath: String = "/usr/bin/etcd", logger: Logger) async throws -> EtcdTestServer {
        guard FileManager.default.isExecutableFile(atPath: etcdPath) else {
            throw StartError(description: "No etcd at \(etcdPath); install it with `apt-get install etcd-server`")
        }
        var lastLog = ""
        for _ in 1...portAttempts {
            let port = try pickFreeLoopbackPorts(1)[0]
            // Nobody dials a single member's peer URL, so port 0 is safe there.
            let member = EtcdMember(
                name: "s1", clientPort: port, peerURL: "http://127.0.0.1:0", initialCluster: "s1=http://127.0.0.1:0",
                clusterToken: "statebus-test-\(getpid())-\(port)")
            let server = try launch(etcdPath, member, logger: logger)
            switch await waitUntilReady([server]) {
            case .ready:
                logger.debug("etcd test server ready", metadata: ["endpoint": "\(server.endpoint)", "pid": "\(server.pid)"])
                return server
            case .portTaken(let log):
                lastLog = log
                await server.stop()
            case .failed(let why):
                await server.stop()
                throw StartError(description: why)
            }
        }
        throw StartError(description: "etcd found no free port in \(portAttempts) attempts; its last log:\n\(lastLog)")
    }

    /// Starts etcd, runs `body` with it, and stops it, also when `body` throws.
    /// - Parameters:
    ///   - etcdPath: the etcd binary.
    ///   - logger: where the server's start and stop are logged.
    ///   - body: the test.
    /// - Returns: what `body` returns.
    /// - Throws: ``StartError``, or what `body` throws.
    static func withEtcd<T>(
        etcdPath: String = "/usr/bin/etcd", logger: Logger, _ body: (EtcdTestServer) async throws -> T
    ) async throws -> T {
        let server = try await start(etcdPath: etcdPath, logger: logger)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    /// etcd's log so far (warnings and errors, as JSON lines).
    var log: String {
        process.output.joined(separator: "\n")
    }

    /// Whether the process is still running (a paused one is).
    var isRunning: Bool {
        process.isRunning
    }

    /// Stops etcd (SIGTERM, then SIGKILL after 5 s) and removes its folder. Does nothing the
    /// second time.
    func stop() async {
        let firstStop = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard firstStop else { return }
        if isRunning {
            sendSignal(SIGTERM)
            // A paused process keeps a SIGTERM pending until it runs again.
            sendSignal(SIGCONT)
            if !(await waitForExit(within: .seconds(5))) {
                sendSignal(SIGKILL)
                _ = await waitForExit(within: .seconds(5))
            }
        }
        try? FileManager.default.removeItem(at: directory)
        logger.debug("etcd test server stopped", metadata: ["endpoint": "\(endpoint)", "pid": "\(pid)"])
    }

    /// Kills etcd with SIGKILL, as a crash would, and waits until it is gone. The folder stays
    /// until ``stop()``.
    func kill() async {
        sendSignal(SIGKILL)
        _ = await waitForExit(within: .seconds(5))
    }

    /// Pauses etcd with SIGSTOP: it keeps its connections but answers nothing.
    func pause() {
        // Returns once every thread has stopped: a thread still running could answer.
        process.pause()
    }

    /// Resumes a paused etcd with SIGCONT.
    func resume() {
        process.resume()
    }

    private func sendSignal(_ number: Int32) {
        guard isRunning else { return }
        #if canImport(Glibc)
            _ = Glibc.kill(pid, number)
        #else
            _ = Darwin.kill(pid, number)
        #endif
    }

    /// Waits until the process has exited (the kernel tells the launcher's spawner); false
    /// when it is still running at the end.
    private func waitForExit(within timeout: Duration) async -> Bool {
        (try? await process.exited(timeout: timeout)) != nil
    }

    /// How a start ended.
    enum StartOutcome {
        /// Every member is healthy.
        case ready
        /// A member exited because its port was taken in the meantime: retry with new ports.
        case portTaken(log: String)
        /// A member exited for another reason, or the deadline passed.
        case failed(String)
    }

    /// Polls until every member says it is healthy, one exits, or 10 s pass.
    static func waitUntilReady(_ members: [EtcdTestServer]) async -> StartOutcome {
        let deadline = ContinuousClock.now + readyTimeout
        var pending = members
        while true {
            for member in members where !member.isRunning {
                let log = member.log
                if log.contains("address already in use") { return .portTaken(log: log) }
                return .failed("etcd at \(member.endpoint) exited before it was ready; its log:\n\(log)")
            }
            var stillPending: [EtcdTestServer] = []
            for member in pending where !(await member.isHealthy()) {
                stillPending.append(member)
            }
            pending = stillPending
            if pending.isEmpty { return .ready }
            guard ContinuousClock.now < deadline else {
                let member = pending[0]
                return .failed("etcd at \(member.endpoint) was not healthy within \(readyTimeout); its log:\n\(member.log)")
            }
            // A poll within `readyTimeout`: a member's health has no signal of its own.
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Whether `GET /health` answers `{"health":"true"}` now.
    private func isHealthy() async -> Bool {
        guard let client = try? EtcdClient(endpoints: [endpoint], requestTimeout: .seconds(5), logger: logger) else { return false }
        let healthy = (try? await client.health()) == true
        await client.shutdown()
        return healthy
    }

    /// Starts one etcd member in a new temporary folder. Through the launcher's spawner: a
    /// member ends with the test process, however that ends (a parent-death signal).
    static func launch(_ etcdPath: String, _ member: EtcdMember, logger: Logger) throws -> EtcdTestServer {
        let directory = try makeTemporaryDirectory()
        let process: NodeProcess
        do {
            process = try NodeProcess(
                executable: URL(fileURLWithPath: etcdPath), arguments: member.arguments(dataDirectory: directory.appendingPathComponent("data").path),
                name: "etcd")
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw StartError(description: "Could not start \(etcdPath): \(error)")
        }
        return EtcdTestServer(endpoint: member.clientURL, process: process, directory: directory, logger: logger)
    }

    /// A new folder under the system's temporary directory.
    private static func makeTemporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("statebus-etcd-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw StartError(description: "Could not create a temporary folder at \(url.path): \(error)")
        }
        return url
    }
}
