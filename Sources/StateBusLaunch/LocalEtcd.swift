import Foundation

/// A single-member etcd on a free loopback port, for the tests, the bench and the demo of
/// high-availability groups: Debian's `etcd` (`deploy/setup.sh --etcd`), its data in a
/// folder of the caller's, ended like any ``NodeProcess``.
///
/// Its heartbeat and election timeout (50 and 500 ms) keep a lease's minimum at 1 s; it does
/// not sync to disk (`--unsafe-no-fsync`): such a member's data need not survive a power cut.
public struct LocalEtcd: Sendable {
    /// Its client URL, `http://127.0.0.1:<port>`.
    public let endpoint: String
    /// Its process.
    public let process: NodeProcess

    /// The installed `etcd`, if any.
    public static var executable: URL? {
        ["/usr/bin/etcd", "/usr/local/bin/etcd"].first(where: FileManager.default.isExecutableFile(atPath:)).map(URL.init(fileURLWithPath:))
    }

    /// Starts a member and waits until it reports itself healthy.
    /// - Parameters:
    ///   - name: the member's name.
    ///   - folder: a folder for its data (a new subfolder per attempt).
    ///   - timeout: how long it may take to become healthy.
    ///   - isHealthy: asks the member at an endpoint whether it is healthy (an etcd client's
    ///     `health()`: this module knows processes, not etcd's API).
    ///   - adopt: takes charge of the process as soon as it runs (a test system ends it at
    ///     shut-down).
    /// - Returns: the member.
    /// - Throws: ``LaunchError`` when etcd is not installed or cannot start; ``WaitTimeout``
    ///   when it does not become healthy.
    public static func start(
        name: String = "etcd", in folder: String, timeout: Duration = .seconds(30), isHealthy: @Sendable (String) async -> Bool,
        adopt: (NodeProcess) throws -> NodeProcess = { $0 }
    ) async throws -> LocalEtcd {
        guard let executable else {
            throw LaunchError("etcd is not installed: run deploy/setup.sh --etcd (it installs Debian's etcd-server)")
        }
        let deadline = ContinuousClock.now + timeout
        var attempt = 0
        while true {
            attempt += 1
            // A port free a moment ago may be taken by the time etcd binds it: etcd then
            // exits at once, and another port is tried.
            let port = try FreePort.pick()
            let endpoint = "http://127.0.0.1:\(port)"
            let process = try adopt(
                try NodeProcess(
                    executable: executable,
                    arguments: arguments(
                        name: name, data: "\(folder)/\(name)-\(attempt).etcd", client: endpoint, peer: "http://127.0.0.1:0",
                        cluster: "\(name)=http://127.0.0.1:0", token: "statebus-\(getpid())-\(port)"),
                    name: name))
            while true {
                if await isHealthy(endpoint) { return LocalEtcd(endpoint: endpoint, process: process) }
                if !process.isRunning, attempt < 5 { break }
                guard ContinuousClock.now < deadline else {
                    process.terminate(grace: .seconds(1))
                    throw WaitTimeout(
                        what: "etcd at \(endpoint) to be healthy", timeout: timeout,
                        lastSeen: (process.isRunning ? "running, not healthy; " : "exited; ") + process.output.suffix(3).joined(separator: " | "))
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// Starts a cluster of `size` members on loopback (each its own process, client and peer
    /// ports picked), and waits until every member reports itself healthy.
    /// - Parameters: as ``start(name:in:timeout:isHealthy:adopt:)``; members are named
    ///   `<name>1`, `<name>2`, ….
    /// - Returns: the members, in order.
    /// - Throws: as ``start(name:in:timeout:isHealthy:adopt:)``.
    public static func startCluster(
        size: Int, name: String = "etcd", in folder: String, timeout: Duration = .seconds(60), isHealthy: @Sendable (String) async -> Bool,
        adopt: (NodeProcess) throws -> NodeProcess = { $0 }
    ) async throws -> [LocalEtcd] {
        guard let executable else {
            throw LaunchError("etcd is not installed: run deploy/setup.sh --etcd (it installs Debian's etcd-server)")
        }
        let deadline = ContinuousClock.now + timeout
        var attempt = 0
        while true {
            attempt += 1
            let clientPorts = try (0..<size).map { _ in try FreePort.pick() }
            let peerPorts = try (0..<size).map { _ in try FreePort.pick() }
            let names = (1...size).map { "\(name)\($0)" }
            let cluster = zip(names, peerPorts).map { "\($0)=http://127.0.0.1:\($1)" }.joined(separator: ",")
            var members: [LocalEtcd] = []
            for index in 0..<size {
                let client = "http://127.0.0.1:\(clientPorts[index])"
                let peer = "http://127.0.0.1:\(peerPorts[index])"
                let process = try adopt(
                    try NodeProcess(
                        executable: executable,
                        arguments: arguments(
                            name: names[index], data: "\(folder)/\(names[index])-\(attempt).etcd", client: client, peer: peer,
                            cluster: cluster, token: "statebus-\(getpid())-\(clientPorts[0])"),
                        name: names[index]))
                members.append(LocalEtcd(endpoint: client, process: process))
            }
            while true {
                var healthy = 0
                for member in members where await isHealthy(member.endpoint) { healthy += 1 }
                if healthy == size { return members }
                if members.contains(where: { !$0.process.isRunning }), attempt < 5 {
                    for member in members { member.process.terminate(grace: .seconds(1)) }
                    break
                }
                guard ContinuousClock.now < deadline else {
                    for member in members { member.process.terminate(grace: .seconds(1)) }
                    throw WaitTimeout(
                        what: "a \(size)-member etcd cluster to be healthy", timeout: timeout, lastSeen: "\(healthy) of \(size) members healthy")
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// A member's command line: its URLs, the cluster's, and the timing that keeps a lease's
    /// minimum at 1 s; with pre-vote, a member that comes back after a cut does not force an
    /// election (etcd would have no leader for seconds, and the group's leader would step down).
    private static func arguments(name: String, data: String, client: String, peer: String, cluster: String, token: String) -> [String] {
        [
            "--name", name, "--data-dir", data, "--listen-client-urls", client, "--advertise-client-urls", client,
            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", cluster,
            "--initial-cluster-state", "new", "--initial-cluster-token", token,
            "--heartbeat-interval", "50", "--election-timeout", "500", "--pre-vote", "--snapshot-count", "10000",
            "--quota-backend-bytes", "134217728", "--unsafe-no-fsync", "--logger", "zap", "--log-level", "error", "--log-outputs", "stderr"
        ]
    }
}
