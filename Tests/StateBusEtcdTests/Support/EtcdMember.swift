import Foundation

/// One etcd member's place in a test cluster: its name, client port and peer URL, and the
/// cluster it bootstraps with.
struct EtcdMember {
    var name: String
    var clientPort: Int
    var peerURL: String
    /// `name=peerURL` for every member, comma-separated.
    var initialCluster: String
    /// The same for every member of one cluster, and unique to it.
    var clusterToken: String

    var clientURL: String { "http://127.0.0.1:\(clientPort)" }

    /// The command line: loopback URLs, and timings tuned for a busy 2-core machine (50/500 ms
    /// heartbeat and election timeout gave no missed heartbeats where 10/100 gave dozens).
    /// `--unsafe-no-fsync` is for tests only: it loses data on a crash of the machine.
    func arguments(dataDirectory: String) -> [String] {
        [
            "--name", name, "--data-dir", dataDirectory,
            "--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
            "--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
            "--initial-cluster", initialCluster, "--initial-cluster-state", "new",
            "--initial-cluster-token", clusterToken,
            "--heartbeat-interval", "50", "--election-timeout", "500", "--snapshot-count", "10000",
            "--quota-backend-bytes", "134217728", "--unsafe-no-fsync",
            "--logger", "zap", "--log-level", "warn", "--log-outputs", "stderr"
        ]
    }
}
