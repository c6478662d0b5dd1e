import Foundation
import StateBusLaunch
import StateBusTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A host, two relays and 100 views on three "machines": network namespaces joined by veth
/// pairs (host ↔ relays ↔ views), over tcp. The link between host and relays goes down and
/// comes back; every view converges. `deploy/fanout/try-locally.sh` does the same with
/// hundreds of views. Needs root and `ip`; skipped with a printed reason otherwise.
@Suite("Fan-out across network namespaces: host, relays, views")
struct FanoutNamespaceTests {
    static let viewsPerRelay = 50

    @Test("views behind two relays on another namespace converge, also after the host-relay link went down and came back")
    func relaysAcrossNamespaces() async throws {
        guard let chain = try NamespaceChain.make() else { return }
        defer { chain.remove() }
        let statebus = try BuiltProducts.executable("statebus").path
        let host = try chain.run(
            in: chain.host, name: "host",
            [
                statebus, "host", "--control", "tcp://\(chain.hostAddress):*", "--object", "Counter", "--property", "count:int=0",
                "--no-persistence", "--heartbeat-ms", "200", "--insecure"
            ])
        defer { host.terminate() }
        let ready = try await host.waitForLine("the host ready") { $0.hasPrefix("ready ") }
        let control = try #require(lineField("control", in: ready), "no control endpoint in \(ready)")

        var relays: [NodeProcess] = []
        defer { for relay in relays { relay.terminate() } }
        var relayEndpoints: [String] = []
        for index in 0..<2 {
            let relay = try chain.run(
                in: chain.relays, name: "relay\(index)",
                [statebus, "relay", "--upstream", control, "--control", "tcp://\(chain.relayAddress):*", "--name", "relay\(index)", "--insecure"])
            relays.append(relay)
            let line = try await relay.waitForLine("relay \(index) ready", timeout: .seconds(60)) { $0.hasPrefix("ready ") }
            relayEndpoints.append(try #require(lineField("control", in: line), "no control endpoint in \(line)"))
        }
        var loads: [NodeProcess] = []
        defer { for load in loads { load.terminate() } }
        for (index, endpoint) in relayEndpoints.enumerated() {
            let load = try chain.run(
                in: chain.views, name: "views\(index)",
                [statebus, "load", "--control", endpoint, "--object", "Counter", "--views", "\(Self.viewsPerRelay)", "--report-ms", "0"])
            loads.append(load)
            try await load.waitForLine("\(Self.viewsPerRelay) views live behind relay \(index)", timeout: .seconds(120)) {
                $0.hasPrefix("ready views=")
            }
        }

        try await Self.set(count: 1, at: control, chain: chain, statebus: statebus)
        try await Self.waitForAll(loads, sequence: 1)

        // The link between host and relays goes down: the relays hear nothing, so neither do
        // their views, which go stale. A change made meanwhile reaches every view once the
        // link is back and the relays have joined the host again.
        try chain.setHostLink(up: false)
        for load in loads {
            let mark = load.lineCount
            load.send(line: "all stale")
            try await load.waitForLine("every view of \(load.name) stale while the link is down", after: mark, timeout: .seconds(60)) {
                $0.hasPrefix("all stale ")
            }
        }
        try await Self.set(count: 2, at: control, chain: chain, statebus: statebus)
        try chain.setHostLink(up: true)
        try await Self.waitForAll(loads, sequence: 2)
        for load in loads {
            let mark = load.lineCount
            load.send(line: "status")
            let status = try await load.waitForLine("\(load.name) status", after: mark, timeout: .seconds(30)) { $0.hasPrefix("status ") }
            #expect(status.contains("live=\(Self.viewsPerRelay) stale=0 syncing=0 min-sequence=2 max-sequence=2"), "\(load.name): \(status)")
        }
        #expect(host.isRunning && relays.allSatisfy(\.isRunning) && loads.allSatisfy(\.isRunning))
    }

    static func set(count: Int, at control: String, chain: NamespaceChain, statebus: String) async throws {
        let set = try chain.run(in: chain.host, name: "set", [statebus, "set", "--control", control, "--object", "Counter", "count", "\(count)"])
        defer { set.terminate() }
        #expect(try await set.exited(timeout: .seconds(60)) == 0, "\(set.output)")
    }

    static func waitForAll(_ loads: [NodeProcess], sequence: Int) async throws {
        for load in loads {
            let mark = load.lineCount
            load.send(line: "wait \(sequence)")
            try await load.waitForLine("every view of \(load.name) at sequence \(sequence)", after: mark, timeout: .seconds(90)) {
                $0.hasPrefix("reached sequence=\(sequence) ")
            }
        }
    }
}

/// Three network namespaces in a row, joined by two veth pairs on private /30s that exist
/// only inside them: host ↔ relays ↔ views.
struct NamespaceChain {
    let host: String
    let relays: String
    let views: String
    let hostAddress = "10.214.1.1"
    let relayUpstreamAddress = "10.214.1.2"
    let relayAddress = "10.214.2.1"
    let viewAddress = "10.214.2.2"
    /// The relays' end of the link to the host.
    let relayUplink: String
    let names: [String]
    let ip: URL

    /// Makes the namespaces and links, or prints why it cannot and returns `nil`.
    static func make() throws -> NamespaceChain? {
        guard geteuid() == 0 else {
            print("fan-out namespace test skipped: network namespaces need root (running as uid \(geteuid()))")
            return nil
        }
        guard let ip = IPCommand.find() else {
            print("fan-out namespace test skipped: no `ip` command (install iproute2)")
            return nil
        }
        let id = UUID().uuidString.prefix(6).lowercased()
        let chain = NamespaceChain(
            host: "sbf-\(id)-h", relays: "sbf-\(id)-r", views: "sbf-\(id)-v", relayUplink: "sbfr\(id)",
            names: ["sbfh\(id)", "sbfr\(id)", "sbfs\(id)", "sbfv\(id)"], ip: ip)
        do {
            try chain.ip("netns", "add", chain.host)
        } catch {
            print("fan-out namespace test skipped: cannot make a network namespace: \(error)")
            return nil
        }
        do {
            try chain.ip("netns", "add", chain.relays)
            try chain.ip("netns", "add", chain.views)
            // host ↔ relays, relays ↔ views.
            let pairs = [
                (chain.names[0], chain.host, chain.hostAddress, chain.names[1], chain.relays, chain.relayUpstreamAddress),
                (chain.names[2], chain.relays, chain.relayAddress, chain.names[3], chain.views, chain.viewAddress)
            ]
            for (left, leftNamespace, leftAddress, right, rightNamespace, rightAddress) in pairs {
                try chain.ip("link", "add", left, "type", "veth", "peer", "name", right)
                for (interface, namespace, address) in [(left, leftNamespace, leftAddress), (right, rightNamespace, rightAddress)] {
                    try chain.ip("link", "set", interface, "netns", namespace)
                    try chain.ip("-n", namespace, "addr", "add", "\(address)/30", "dev", interface)
                    try chain.ip("-n", namespace, "link", "set", interface, "up")
                    try chain.ip("-n", namespace, "link", "set", "lo", "up")
                }
            }
        } catch {
            chain.remove()
            throw error
        }
        return chain
    }

    /// Starts a process inside a namespace (`ip netns exec` execs it: the pid is the process's).
    func run(in namespace: String, name: String, _ command: [String]) throws -> NodeProcess {
        try NodeProcess(executable: ip, arguments: ["netns", "exec", namespace] + command, name: name)
    }

    /// Takes the link between host and relays down or up (the relays' end).
    func setHostLink(up: Bool) throws {
        try ip("-n", relays, "link", "set", relayUplink, up ? "up" : "down")
    }

    /// Deletes the namespaces; the veth pairs go with them. Never throws: it runs in `defer`.
    func remove() {
        for namespace in [host, relays, views] { try? ip("netns", "del", namespace) }
        for name in names { try? ip("link", "del", name) }
    }

    /// Runs `ip` and waits for it.
    func ip(_ arguments: String...) throws { try IPCommand.run(ip, arguments) }
}
