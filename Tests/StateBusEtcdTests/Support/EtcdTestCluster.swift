import Foundation
import Logging

/// A real 3-member (or other size) etcd cluster for tests, every member on loopback ports
/// picked at start, each in a temporary folder of its own. For tests of what happens when a
/// member dies or pauses: the cluster keeps quorum while a majority runs.
///
/// ```swift
/// try await EtcdTestCluster.withCluster(logger: logger) { cluster in
///     let client = try EtcdClient(endpoints: cluster.endpoints, logger: logger)
///     …
///     await cluster.members[0].kill()
/// }
/// ```
///
/// Thread safety: every method may be called from any task.
final class EtcdTestCluster: Sendable {
    /// The members, in the order of ``endpoints``.
    let members: [EtcdTestServer]

    /// Every member's client URL.
    var endpoints: [String] { members.map(\.endpoint) }

    private init(members: [EtcdTestServer]) {
        self.members = members
    }

    /// Starts the members and waits until every one is healthy. When a picked port was taken
    /// in the meantime, the whole cluster starts again on new ports, up to 5 times.
    /// - Parameters:
    ///   - size: how many members; 3 tolerates one failure.
    ///   - etcdPath: the etcd binary.
    ///   - logger: where the members' start and stop are logged.
    /// - Returns: the running cluster.
    /// - Throws: ``EtcdTestServer/StartError`` with a member's log.
    static func start(size: Int = 3, etcdPath: String = "/usr/bin/etcd", logger: Logger) async throws -> EtcdTestCluster {
        guard size >= 1 else { throw EtcdTestServer.StartError(description: "A cluster needs at least one member, not \(size)") }
        guard FileManager.default.isExecutableFile(atPath: etcdPath) else {
            throw EtcdTestServer.StartError(description: "No etcd at \(etcdPath); install it with `apt-get install etcd-server`")
        }
        var lastLog = ""
        for _ in 1...EtcdTestServer.portAttempts {
            let ports = try pickFreeLoopbackPorts(2 * size)
            let names = (1...size).map { "n\($0)" }
            let peerURLs = (0..<size).map { "http://127.0.0.1:\(ports[size + $0])" }
            let initialCluster = zip(names, peerURLs).map { "\($0)=\($1)" }.joined(separator: ",")
            let token = "statebus-test-\(getpid())-\(ports[0])"
            var members: [EtcdTestServer] = []
            do {
                for index in 0..<size {
                    let member = EtcdMember(
                        name: names[index], clientPort: ports[index], peerURL: peerURLs[index], initialCluster: initialCluster, clusterToken: token)
                    members.append(try EtcdTestServer.launch(etcdPath, member, logger: logger))
                }
            } catch {
                for member in members { await member.stop() }
                throw error
            }
            switch await EtcdTestServer.waitUntilReady(members) {
            case .ready:
                logger.debug("etcd test cluster ready", metadata: ["endpoints": "\(members.map(\.endpoint))"])
                return EtcdTestCluster(members: members)
            case .portTaken(let log):
                lastLog = log
                for member in members { await member.stop() }
            case .failed(let why):
                for member in members { await member.stop() }
                throw EtcdTestServer.StartError(description: why)
            }
        }
        throw EtcdTestServer.StartError(description: "etcd found no free ports in \(EtcdTestServer.portAttempts) attempts; the last log:\n\(lastLog)")
    }

    /// Starts a cluster, runs `body` with it, and stops it, also when `body` throws.
    /// - Parameters:
    ///   - size: how many members.
    ///   - etcdPath: the etcd binary.
    ///   - logger: where the members' start and stop are logged.
    ///   - body: the test.
    /// - Returns: what `body` returns.
    /// - Throws: ``EtcdTestServer/StartError``, or what `body` throws.
    static func withCluster<T>(
        size: Int = 3, etcdPath: String = "/usr/bin/etcd", logger: Logger, _ body: (EtcdTestCluster) async throws -> T
    ) async throws -> T {
        let cluster = try await start(size: size, etcdPath: etcdPath, logger: logger)
        do {
            let result = try await body(cluster)
            await cluster.stop()
            return result
        } catch {
            await cluster.stop()
            throw error
        }
    }

    /// Stops every member and removes their folders.
    func stop() async {
        for member in members { await member.stop() }
    }
}
