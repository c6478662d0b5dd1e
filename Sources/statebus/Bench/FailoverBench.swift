import Foundation
import StateBus
import StateBusEtcd
import StateBusLaunch

/// Failover: two `statebus host --ha` processes of one group on a single etcd member, views
/// in the bench process given both control endpoints; the leader is killed with SIGKILL again
/// and again, and each time the bench measures how long until every view is live on the new
/// leader (a new epoch). The killed host is started again and stands by for the next round.
struct FailoverBench {
    /// One run's figures.
    struct Outcome: Sendable {
        /// SIGKILL to every view live on the new leader, per kill.
        var takeovers: [Duration]
        var problem: String?
    }

    let kills: Int
    let views: Int
    /// The leader's lease, in seconds (etcd's minimum with the member's timing is 1).
    static let leaseSeconds = 1
    /// The hosts' heartbeat: views call a host silent after three.
    static let heartbeatMs = 200

    func run() async throws -> Outcome {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let etcd = try await LocalEtcd.start(in: folder.path, isHealthy: EtcdClient.isHealthy)
        defer { etcd.process.terminate(grace: .seconds(1)) }
        let workers = WorkerGroup()
        defer { workers.terminateAll() }
        let controls = ["one", "two"].map { folder.endpoint("\($0).control") }
        var hosts: [NodeProcess] = []
        for control in controls {
            let host = try workers.startCommand(
                [
                    "host", "--control", control, "--heartbeat-ms", "\(Self.heartbeatMs)", "--ha", etcd.endpoint, "--ha-group", "failover",
                    "--ha-lease-seconds", "\(Self.leaseSeconds)", "--object", ViewWorkers.object, "--property", "count:int~=0"
                ], name: "host \(control)")
            _ = try await host.waitForLine("its role", timeout: .seconds(60)) { $0.hasPrefix("role ") }
            hosts.append(host)
        }
        var replicas: [Replica] = []
        defer { for replica in replicas { replica.close() } }
        for index in 0..<views {
            let replica = try Replica(
                object: ViewWorkers.object, controlEndpoint: controls.joined(separator: ","),
                configuration: ReplicaConfiguration(nodeName: "failover view \(index)", logger: BenchLogger.quiet))
            replicas.append(replica)
        }
        for replica in replicas { try await replica.waitUntilLive(timeout: .seconds(60)) }

        var takeovers: [Duration] = []
        for round in 1...kills {
            guard let leader = hosts.firstIndex(where: { $0.output.last(where: { $0.hasPrefix("role ") })?.hasPrefix("role leader") == true })
            else { return Outcome(takeovers: takeovers, problem: "round \(round): no host says it leads") }
            let epochs = replicas.map(\.epoch)
            let killed = ContinuousClock.now
            hosts[leader].kill()
            let deadline = killed + .seconds(60)
            // Polled every millisecond: the figure is seconds, and a view's own change feed
            // would only tell the same later.
            while !zip(replicas, epochs).allSatisfy({ $0.connectionState == .live && $0.epoch != $1 }) {
                guard ContinuousClock.now < deadline else {
                    return Outcome(takeovers: takeovers, problem: "round \(round): the views were not all live on a new leader within 60 s")
                }
                try await Task.sleep(for: .milliseconds(1))
            }
            takeovers.append(ContinuousClock.now - killed)
            let mark = hosts[leader].lineCount
            try hosts[leader].start()
            _ = try await hosts[leader].waitForLine("the killed host back as a standby", after: mark, timeout: .seconds(60)) {
                $0.hasPrefix("role standby leader=")
            }
        }
        return Outcome(takeovers: takeovers, problem: nil)
    }
}
