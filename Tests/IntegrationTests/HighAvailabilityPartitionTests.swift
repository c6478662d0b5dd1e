import Foundation
import StateBusLaunch
import StateBusTesting
import Testing

/// A group's leader cut off by a real network partition (issue 35): the leader in one network
/// namespace, etcd, the standby and a view in another, joined by a veth pair (``Link``).
/// Cutting the link is what happens when a machine's cable goes: packets vanish. Needs root
/// and `ip`; skipped with a printed reason otherwise.
@Suite("High availability: the leader cut off by a network partition")
struct HighAvailabilityPartitionTests {
    @Test("the cut-off leader steps down by itself, the standby with etcd takes over, the view follows; back, the old leader stands by")
    func leaderPartitioned() async throws {
        guard LocalEtcd.executable != nil else {
            print("high-availability partition test skipped: etcd is not installed (deploy/setup.sh --etcd)")
            return
        }
        guard let link = try Link.make() else { return }
        defer { link.remove() }
        try await withTestSystem { system in
            let statebus = try BuiltProducts.executable("statebus").path
            let etcdPath = try #require(LocalEtcd.executable).path
            // etcd beside the standby: the namespace is empty, so any port is free there.
            let port = try FreePort.pick()
            let etcdURL = "http://\(link.viewAddress):\(port)"
            let etcd = try system.adopt(
                try link.run(
                    in: link.viewNamespace, name: "etcd",
                    [
                        etcdPath, "--name", "e", "--data-dir", system.path("partition.etcd"), "--listen-client-urls", etcdURL,
                        "--advertise-client-urls", etcdURL, "--listen-peer-urls", "http://127.0.0.1:0",
                        "--initial-advertise-peer-urls", "http://127.0.0.1:0", "--initial-cluster", "e=http://127.0.0.1:0",
                        "--heartbeat-interval", "50", "--election-timeout", "500", "--unsafe-no-fsync", "--logger", "zap",
                        "--log-level", "error", "--log-outputs", "stderr"
                    ]))
            // Healthy once a host of the group can use it: asked from inside its namespace.
            let deadline = ContinuousClock.now + .seconds(90)
            while true {
                // bash's /dev/tcp: no HTTP client need be installed in the namespace's view.
                let request = "exec 3<>/dev/tcp/\(link.viewAddress)/\(port) && printf 'GET /health HTTP/1.0\\r\\n\\r\\n' >&3 && timeout 5 cat <&3"
                let probe = try link.run(in: link.viewNamespace, name: "health", ["/bin/bash", "-c", request])
                _ = try? await probe.exited(timeout: .seconds(30))
                if probe.output.contains(where: { $0.contains(#""health":"true""#) }) { break }
                guard ContinuousClock.now < deadline, etcd.isRunning else {
                    Issue.record("etcd in the namespace was not healthy: \(etcd.output.suffix(5))")
                    return
                }
                // A poll, not a guess: etcd logs when it serves, not when its member has a leader,
                // which only /health says; each probe has its own deadline.
                try await Task.sleep(for: .milliseconds(100))
            }
            func host(_ name: String, in namespace: String, address: String) throws -> NodeProcess {
                try system.adopt(
                    try link.run(
                        in: namespace, name: name,
                        [
                            statebus, "host", "--name", name, "--control", "tcp://\(address):\(try FreePort.pick())", "--insecure",
                            "--heartbeat-ms", "200", "--ha", etcdURL, "--ha-group", "partition", "--ha-lease-seconds", "2",
                            "--object", "Counter", "--property", "count:int~=0"
                        ]))
            }
            let a = try host("a", in: link.hostNamespace, address: link.hostAddress)
            let aReady = try await a.waitForLine("a ready", timeout: .seconds(120)) { $0.hasPrefix("ready ") }
            _ = try await a.waitForLine("a to lead", timeout: .seconds(120)) { $0.hasPrefix("role leader") }
            let b = try host("b", in: link.viewNamespace, address: link.viewAddress)
            let bReady = try await b.waitForLine("b ready", timeout: .seconds(120)) { $0.hasPrefix("ready ") }
            let aControl = String(aReady.split(separator: " ")[1].dropFirst("control=".count))
            let bControl = String(bReady.split(separator: " ")[1].dropFirst("control=".count))
            _ = try await b.waitForLine("b to stand by", timeout: .seconds(120)) { $0 == "role standby leader=\(aControl)" }
            let view = try system.adopt(
                try link.run(
                    in: link.viewNamespace, name: "view",
                    [statebus, "watch", "--json", "--edits", "--control", "\(aControl),\(bControl)", "--object", "Counter"]))
            try await view.waitForLine("the view live on a") { $0.contains(#""connection":"live""#) }
            view.send(line: "count 1")
            try await view.waitForLine("the first write's answer") { $0.contains(#""event":"write""#) && $0.contains(#""accepted":true"#) }

            let (aMark, bMark, viewMark) = (a.lineCount, b.lineCount, view.lineCount)
            try link.set(up: false)
            _ = try await a.waitForLine("a to step down by itself", after: aMark) { $0.hasPrefix("role standby") }
            _ = try await b.waitForLine("b to lead", after: bMark) { $0.hasPrefix("role leader") }
            view.send(line: "count 2")
            try await view.waitForLine("the view live on b with the write", after: viewMark) {
                $0.contains(#""connection":"live""#) && $0.contains(#""count":2"#)
            }
            try await view.waitForLine("the write accepted by b", after: viewMark) {
                $0.contains(#""event":"write""#) && $0.contains(#""accepted":true"#)
            }

            let back = a.lineCount
            try link.set(up: true)
            _ = try await a.waitForLine("a to stand by behind b", after: back) { $0 == "role standby leader=\(bControl)" }
        }
    }
}
