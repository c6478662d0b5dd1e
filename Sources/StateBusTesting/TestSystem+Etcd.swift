import Foundation
import Logging
import StateBusEtcd
import StateBusLaunch

/// A real etcd member a ``TestSystem`` started, for tests of high-availability groups.
public struct EtcdNode: Sendable {
    /// Its client URL, `http://127.0.0.1:<port>`.
    public let endpoint: String
    /// Its process, ended at the system's shut-down.
    public let process: NodeProcess

    /// Kills it with SIGKILL.
    public func kill() { process.kill() }
    /// Stops it with SIGSTOP: it answers nothing until ``resume()``.
    public func pause() { process.pause() }
    /// Continues it after ``pause()``.
    public func resume() { process.resume() }
}

extension TestSystem {
    /// Starts a single-member etcd on a free loopback port, with its data in the system's
    /// folder, and waits until it reports itself healthy.
    ///
    /// Its heartbeat and election timeout (50 and 500 ms) keep a lease's minimum at 1 s; it
    /// does not sync to disk (`--unsafe-no-fsync`): a test's data need not survive a power cut.
    /// - Parameters:
    ///   - name: the member's name and data folder.
    ///   - timeout: how long it may take to become healthy.
    /// - Returns: the member, ended at shut-down.
    /// - Throws: ``TestSystemError`` when etcd is not installed (`deploy/setup.sh --etcd`
    ///   installs Debian's), ``WaitTimeout`` when it does not become healthy.
    public func startEtcd(name: String = "etcd", timeout: Duration = .seconds(30)) async throws -> EtcdNode {
        guard let executable = ["/usr/bin/etcd", "/usr/local/bin/etcd"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw TestSystemError("etcd is not installed: run deploy/setup.sh --etcd (Debian's etcd-server)")
        }
        let deadline = ContinuousClock.now + timeout
        var attempt = 0
        while true {
            attempt += 1
            // A port free a moment ago may be taken by the time etcd binds it: etcd then
            // exits at once, and another port is tried.
            let port = try FreePort.pick()
            let endpoint = "http://127.0.0.1:\(port)"
            let process = try startProcess(
                executable: URL(fileURLWithPath: executable),
                arguments: [
                    "--name", name, "--data-dir", path("\(name)-\(attempt).etcd"),
                    "--listen-client-urls", endpoint, "--advertise-client-urls", endpoint,
                    "--listen-peer-urls", "http://127.0.0.1:0", "--initial-advertise-peer-urls", "http://127.0.0.1:0",
                    "--initial-cluster", "\(name)=http://127.0.0.1:0", "--initial-cluster-state", "new",
                    "--initial-cluster-token", "statebus-test-\(getpid())-\(port)",
                    "--heartbeat-interval", "50", "--election-timeout", "500", "--snapshot-count", "10000",
                    "--quota-backend-bytes", "134217728", "--unsafe-no-fsync", "--logger", "zap", "--log-level", "error",
                    "--log-outputs", "stderr"
                ], name: name)
            let client = try EtcdClient(endpoints: [endpoint], requestTimeout: .milliseconds(500), logger: Logger(label: "statebus.test.etcd"))
            defer { Task { await client.shutdown() } }
            while true {
                if (try? await client.health()) == true { return EtcdNode(endpoint: endpoint, process: process) }
                if !process.isRunning, attempt < 5 { break }
                guard ContinuousClock.now < deadline else {
                    throw WaitTimeout(
                        what: "etcd at \(endpoint) to be healthy", timeout: timeout,
                        lastSeen: process.isRunning ? "running, not healthy" : "exited")
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }
}

/// A loopback TCP port nothing listens on now.
enum FreePort {
    /// Binds port 0 and returns the port the kernel gave, closing the socket.
    static func pick() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw TestSystemError("cannot open a socket to pick a port: errno \(errno)") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw TestSystemError("cannot bind a socket to pick a port: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        guard named == 0 else { throw TestSystemError("cannot read the picked port: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
