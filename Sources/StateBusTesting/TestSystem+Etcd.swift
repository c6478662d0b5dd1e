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
    /// - Throws: `LaunchError` when etcd is not installed (`deploy/setup.sh --etcd`
    ///   installs Debian's), ``WaitTimeout`` when it does not become healthy.
    public func startEtcd(name: String = "etcd", timeout: Duration = .seconds(90)) async throws -> EtcdNode {
        let member = try await LocalEtcd.start(name: name, in: folder, timeout: timeout, isHealthy: EtcdClient.isHealthy, adopt: adopt)
        return EtcdNode(endpoint: member.endpoint, process: member.process)
    }

    /// Starts a cluster of `size` etcd members on loopback ports, and waits until every
    /// member is healthy.
    /// - Returns: the members; give a host all their endpoints (`--ha a,b,c`).
    /// - Throws: as ``startEtcd(name:timeout:)``.
    public func startEtcdCluster(size: Int = 3, timeout: Duration = .seconds(90)) async throws -> [EtcdNode] {
        try await LocalEtcd.startCluster(size: size, in: folder, timeout: timeout, isHealthy: EtcdClient.isHealthy, adopt: adopt).map {
            EtcdNode(endpoint: $0.endpoint, process: $0.process)
        }
    }
}
