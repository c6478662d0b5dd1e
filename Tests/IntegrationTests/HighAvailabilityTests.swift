import Foundation
import Logging
import StateBus
import StateBusEtcd
import StateBusTesting
import StateBusWire
import Testing

/// `statebus host --ha`: hosts of a group on a real etcd, one leading, the others standing by;
/// views that list every host follow the leader through a kill.
@Suite("High availability: standby hosts on etcd")
struct HighAvailabilityTests {
    static let object = "Counter"

    /// Starts `statebus host --ha` for the counter group and waits for its first role.
    static func groupHost(
        _ name: String, in system: TestSystem, etcd: EtcdNode, group: String = "counters", object: String = object,
        expecting role: String = "role "
    ) async throws -> (process: NodeProcess, control: String) {
        let control = system.endpoint("\(name).control")
        let process = try system.startProcess(
            executable: try BuiltProducts.executable("statebus"),
            arguments: [
                "host", "--name", name, "--control", control, "--heartbeat-ms", "200", "--ha", etcd.endpoint, "--ha-group", group,
                "--ha-lease-seconds", "2", "--object", object, "--property", "count:int~=0", "--property", "note:string=start"
            ], name: name)
        _ = try await process.waitForLine("its role (\(role))", timeout: .seconds(60)) { $0.hasPrefix(role) }
        return (process, control)
    }

    @Test("the standby takes over when the leader is killed: views follow, acknowledged durable writes survive")
    func takeover() async throws {
        try await withTestSystem { system in
            let etcd = try await system.startEtcd()
            let a = try await Self.groupHost("a", in: system, etcd: etcd, expecting: "role leader")
            let b = try await Self.groupHost("b", in: system, etcd: etcd, expecting: "role standby leader=\(a.control)")
            // The standby first: its refusal names the leader, and the view goes there.
            let view = try system.adopt(try Replica(object: Self.object, controlEndpoint: "\(b.control),\(a.control)"))
            try await view.waitUntilLive(timeout: .seconds(30))
            let firstEpoch = view.epoch
            for count in Int64(1)...20 { _ = try await view.write("count", to: .int(count)).accepted() }

            a.process.kill()
            _ = try await b.process.waitForLine("the standby to lead", timeout: .seconds(60)) { $0.hasPrefix("role leader") }
            try await view.waitFor(timeout: .seconds(60), "live on the new leader with every acknowledged write") { view in
                view.connectionState == .live && view.epoch != firstEpoch && view.values["count"] == .int(20)
            }
            #expect(try await view.write("count", to: .int(21)).accepted() > 0)

            // The old leader, back, stands by behind the new one.
            let again = try await Self.groupHost("a", in: system, etcd: etcd, expecting: "role standby leader=\(b.control)")
            #expect(again.control == a.control)
        }
    }

    @Test("a standby refuses views with NOT_LEADER naming the leader; one-shot commands given it follow the leader")
    func standbyRefuses() async throws {
        try await withTestSystem { system in
            let etcd = try await system.startEtcd()
            let a = try await Self.groupHost("a", in: system, etcd: etcd, expecting: "role leader")
            let b = try await Self.groupHost("b", in: system, etcd: etcd, expecting: "role standby leader=\(a.control)")
            do {
                _ = try await HostDescription.fetch(controlEndpoint: b.control, timeout: .seconds(10))
                Issue.record("a standby welcomed a hello")
            } catch let error as StateBusError {
                #expect(error.code == .notLeader)
                #expect(error.message.contains(a.control), "\(error)")
            }
            let writer = try system.adopt(try Replica(object: Self.object, controlEndpoint: a.control))
            try await writer.waitUntilLive(timeout: .seconds(30))
            _ = try await writer.write("count", to: .int(5)).accepted()
            // The views list is the leader's: a standby refuses to give its own.
            do {
                _ = try await ConnectedView.list(controlEndpoint: b.control, timeout: .seconds(10))
                Issue.record("a standby listed views")
            } catch let error as StateBusError {
                #expect(error.code == .notLeader, "\(error)")
            }
            let listed = try await ConnectedView.list(controlEndpoint: "\(b.control),\(a.control)", timeout: .seconds(10))
            #expect(listed.views.contains { $0.viewID == writer.viewID }, "\(listed)")
            // `statebus get` given only the standby is led to the leader by its refusal.
            let get = try system.startProcess(
                executable: try BuiltProducts.executable("statebus"),
                arguments: ["get", "--control", b.control, "--object", Self.object, "count"], name: "get")
            #expect(try await get.exited(timeout: .seconds(60)) == 0, "\(get.output)")
            #expect(get.output.contains("5"), "\(get.output)")
        }
    }

    @Test("a leader stopped with SIGTERM resigns: its leader key is gone when it exits, and the standby leads")
    func resignOnTerm() async throws {
        try await withTestSystem { system in
            let etcd = try await system.startEtcd()
            let a = try await Self.groupHost("a", in: system, etcd: etcd, expecting: "role leader")
            let b = try await Self.groupHost("b", in: system, etcd: etcd, expecting: "role standby leader=\(a.control)")
            let client = try EtcdClient(endpoints: [etcd.endpoint], requestTimeout: .seconds(5), logger: Logger(label: "test.etcd"))
            defer { Task { await client.shutdown() } }
            // The leader key says where the leader is and the epoch it welcomes views with.
            let leading = try #require(a.process.output.last { $0.hasPrefix("role leader epoch=") })
            let epoch = leading.split(separator: " ")[2].dropFirst("epoch=".count)
            let record = try await client.get(key: "/statebus/counters/leader").keyValue
            let fields = record.flatMap { try? JSONSerialization.jsonObject(with: Data($0.value)) as? [String: Any] }
            #expect(fields?["control"] as? String == a.control)
            #expect((fields?["epoch"] as? NSNumber)?.uint64Value == UInt64(epoch), "\(String(describing: fields))")
            let mark = b.process.lineCount
            #expect(await a.process.stop() == 0)
            let key = try await client.get(key: "/statebus/counters/leader").keyValue
            #expect(key.map { Self.control(in: $0.value) } != a.control, "the leader key still names the stopped host: \(String(describing: key))")
            _ = try await b.process.waitForLine("the standby to lead", after: mark, timeout: .seconds(60)) { $0.hasPrefix("role leader") }
        }
    }

    /// The control endpoint a leader record (the leader key's JSON value) names.
    static func control(in record: [UInt8]) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(record)) as? [String: Any])?["control"] as? String
    }

    @Test("a leader paused past its lease takes nothing once the standby leads, and stands by when it resumes")
    func pausedLeader() async throws {
        try await withTestSystem { system in
            let etcd = try await system.startEtcd()
            let a = try await Self.groupHost("a", in: system, etcd: etcd, expecting: "role leader")
            let b = try await Self.groupHost("b", in: system, etcd: etcd, expecting: "role standby leader=\(a.control)")
            a.process.pause()
            _ = try await b.process.waitForLine("the standby to lead", timeout: .seconds(60)) { $0.hasPrefix("role leader") }
            let lines = a.process.lineCount
            a.process.resume()
            // From its first request on: its own clock says the lease is gone.
            do {
                _ = try await HostDescription.fetch(controlEndpoint: a.control, timeout: .seconds(10))
                Issue.record("a leader whose lease ran out while it was paused welcomed a hello")
            } catch let error as StateBusError {
                #expect(error.code == .notLeader, "\(error)")
            }
            _ = try await a.process.waitForLine("the old leader to stand by", after: lines, timeout: .seconds(60)) {
                $0 == "role standby leader=\(b.control)"
            }
        }
    }

    @Test("etcd down: the leader steps down, writes fail naming etcd, views stay live read-only; etcd back, writes go on")
    func etcdDown() async throws {
        try await withTestSystem { system in
            let etcd = try await system.startEtcd()
            let a = try await Self.groupHost("a", in: system, etcd: etcd, expecting: "role leader")
            let view = try system.adopt(try Replica(object: Self.object, controlEndpoint: a.control))
            try await view.waitUntilLive(timeout: .seconds(30))
            _ = try await view.write("count", to: .int(1)).accepted()

            let mark = a.process.lineCount
            etcd.pause()
            _ = try await a.process.waitForLine("the leader to step down", after: mark, timeout: .seconds(60)) {
                $0 == "role standby leader=unknown"
            }
            do {
                _ = try await view.write("count", to: .int(2)).accepted()
                Issue.record("a host that lost etcd acknowledged a write")
            } catch let error as StateBusError {
                #expect(error.code == .persistenceFailed, "\(error)")
                #expect(error.message.contains("etcd"), "\(error)")
            }
            #expect(view.connectionState == .live)
            #expect(view.values["count"] == .int(1))

            let back = a.process.lineCount
            etcd.resume()
            _ = try await a.process.waitForLine("the host to lead again", after: back, timeout: .seconds(60)) { $0.hasPrefix("role leader") }
            try await view.waitFor(timeout: .seconds(60), "live again") { $0.connectionState == .live }
            _ = try await view.write("count", to: .int(3)).accepted()
        }
    }

    @Test("one etcd member of three killed: the group keeps its leader or elects another, and durable writes go on")
    func etcdMemberKilled() async throws {
        try await withTestSystem { system in
            let members = try await system.startEtcdCluster(size: 3)
            let endpoints = members.map(\.endpoint).joined(separator: ",")
            var hosts: [(process: NodeProcess, control: String)] = []
            for name in ["a", "b"] {
                let control = system.endpoint("\(name).control")
                let process = try system.startProcess(
                    executable: try BuiltProducts.executable("statebus"),
                    arguments: [
                        "host", "--name", name, "--control", control, "--heartbeat-ms", "200", "--ha", endpoints, "--ha-group", "cluster",
                        "--ha-lease-seconds", "2", "--object", Self.object, "--property", "count:int~=0"
                    ], name: name)
                _ = try await process.waitForLine("host \(name)'s role", timeout: .seconds(60)) { $0.hasPrefix("role ") }
                hosts.append((process, control))
            }
            let view = try system.adopt(try Replica(object: Self.object, controlEndpoint: hosts.map(\.control).joined(separator: ",")))
            try await view.waitUntilLive(timeout: .seconds(30))
            _ = try await view.write("count", to: .int(1)).accepted()
            // The first member: every host's client tries it first.
            members[0].kill()
            for count in Int64(2)...20 {
                _ = try await view.write("count", to: .int(count)).accepted()
            }
            try await view.waitFor(timeout: .seconds(60), "the last write shown") { $0.values["count"] == .int(20) }
        }
    }

    @Test("the leader cut off from etcd steps down before the standby leads; etcd's history shows no two hosts committed at once")
    func leaderCutOff() async throws {
        try await withTestSystem { system in
            let etcd = try await system.startEtcd()
            let etcdPort = try #require(Int(etcd.endpoint.split(separator: ":").last ?? ""))
            let link = try CuttableLink(to: etcdPort)
            defer { link.stop() }
            // a reaches etcd only through the link; b directly.
            let statebus = try BuiltProducts.executable("statebus")
            func host(_ name: String, etcd endpoint: String) throws -> (NodeProcess, String) {
                let control = system.endpoint("\(name).control")
                let process = try system.startProcess(
                    executable: statebus,
                    arguments: [
                        "host", "--name", name, "--control", control, "--heartbeat-ms", "200", "--ha", endpoint, "--ha-group", "cut",
                        "--ha-lease-seconds", "2", "--object", Self.object, "--property", "count:int~=0"
                    ], name: name)
                return (process, control)
            }
            let (a, aControl) = try host("a", etcd: "http://127.0.0.1:\(link.port)")
            _ = try await a.waitForLine("a to lead", timeout: .seconds(60)) { $0.hasPrefix("role leader") }
            let (b, bControl) = try host("b", etcd: etcd.endpoint)
            _ = try await b.waitForLine("b to stand by", timeout: .seconds(60)) { $0 == "role standby leader=\(aControl)" }
            let view = try system.adopt(try Replica(object: Self.object, controlEndpoint: "\(aControl),\(bControl)"))
            try await view.waitUntilLive(timeout: .seconds(30))
            for count in Int64(1)...10 { _ = try await view.write("count", to: .int(count)).accepted() }

            // Each host's role changes, as the test sees them arrive.
            let clock = ContinuousClock()
            let (aMark, bMark) = (a.lineCount, b.lineCount)
            link.cut()
            async let stepDown = a.waitForLine("a to step down", after: aMark, timeout: .seconds(60)) { $0.hasPrefix("role standby") }
            async let takeOver = b.waitForLine("b to lead", after: bMark, timeout: .seconds(60)) { $0.hasPrefix("role leader") }
            _ = try await stepDown
            let aStoppedAt = clock.now
            _ = try await takeOver
            let bStartedAt = clock.now
            #expect(aStoppedAt <= bStartedAt, "b led before a stepped down")
            // The view still reaches a, which keeps it live and read-only: its next write is
            // refused naming etcd, and the view then finds b, which leads.
            let epoch = view.epoch
            do {
                _ = try await view.write("count", to: .int(11)).accepted()
            } catch let error as StateBusError {
                #expect(error.code == .persistenceFailed && error.message.contains("etcd"), "\(error)")
            }
            try await view.waitFor(timeout: .seconds(60), "live on b") { $0.connectionState == .live && $0.epoch != epoch }
            for count in Int64(11)...20 { _ = try await view.write("count", to: .int(count)).accepted() }
            try await view.waitFor(timeout: .seconds(60), "the last write shown") { $0.values["count"] == .int(20) }

            // The link back: a stands by behind b.
            let back = a.lineCount
            link.restore()
            _ = try await a.waitForLine("a to stand by behind b", after: back, timeout: .seconds(60)) { $0 == "role standby leader=\(bControl)" }

            // The whole history of the acknowledged values in etcd: a's commits all come
            // before b's term began, b's all after, so no two hosts committed at once.
            let aTerm = try Self.term(of: a)
            let bTerm = try Self.term(of: b)
            let client = try EtcdClient(endpoints: [etcd.endpoint], requestTimeout: .seconds(5), logger: Logger(label: "test.etcd"))
            defer { Task { await client.shutdown() } }
            var history: [(value: Int64, revision: Int64)] = []
            for try await event in client.watch(key: Array("/statebus/cut/data/Counter/count".utf8), startRevision: 1) {
                if case .int(let value)? = try? Value(serializedBytes: event.keyValue.value.dropFirst(8)) {
                    history.append((value, event.keyValue.modRevision))
                    if value == 20 { break }
                }
            }
            #expect(history.map(\.value) == Array(1...20), "\(history)")
            for (value, revision) in history {
                if value <= 10 {
                    #expect(revision > aTerm && revision < bTerm, "a's commit of \(value) at revision \(revision), terms \(aTerm) and \(bTerm)")
                } else {
                    #expect(revision > bTerm, "b's commit of \(value) at revision \(revision), b's term \(bTerm)")
                }
            }
        }
    }

    /// The term a host's first "role leader" line names.
    static func term(of host: NodeProcess) throws -> Int64 {
        let line = try #require(host.output.first { $0.hasPrefix("role leader ") })
        return try #require(line.split(separator: " ").last.flatMap { Int64($0.dropFirst("term=".count)) })
    }

    @Test("a group with keys: the standby follows with the group's key pair, takes over, and SIGHUP reloads the keys")
    func groupWithKeys() async throws {
        try await withTestSystem { system in
            let etcd = try await system.startEtcd()
            let keys = try TestKeys(folder: system.folder)
            let writer = try keys.client("writer")
            // The group's own key reads: its standbys follow the leader with it.
            try keys.authorize([("write", writer, "writer"), ("read", keys.host, "group")])
            let statebus = try BuiltProducts.executable("statebus")
            func host(_ name: String) async throws -> (NodeProcess, String) {
                let process = try system.startProcess(
                    executable: statebus,
                    arguments: [
                        "host", "--name", name, "--control", "tcp://127.0.0.1:*", "--key", keys.hostKeyFile, "--authorized", keys.authorizedFile,
                        "--heartbeat-ms", "200", "--ha", etcd.endpoint, "--ha-group", "keyed", "--ha-lease-seconds", "2",
                        "--object", Self.object, "--property", "count:int~=0"
                    ], name: name)
                let ready = try await process.waitForLine("\(name) ready", timeout: .seconds(60)) { $0.hasPrefix("ready ") }
                let control = String(ready.split(separator: " ")[1].dropFirst("control=".count))
                _ = try await process.waitForLine("\(name)'s role", timeout: .seconds(60)) { $0.hasPrefix("role ") }
                return (process, control)
            }
            let (a, aControl) = try await host("a")
            let (b, bControl) = try await host("b")
            var configuration = ReplicaConfiguration(nodeName: "writer")
            configuration.security = keys.security(writer)
            let view = try system.adopt(try Replica(object: Self.object, controlEndpoint: "\(aControl),\(bControl)", configuration: configuration))
            try await view.waitUntilLive(timeout: .seconds(30))
            for count in Int64(1)...5 { _ = try await view.write("count", to: .int(count)).accepted() }

            let mark = b.lineCount
            a.kill()
            _ = try await b.waitForLine("b to lead", after: mark, timeout: .seconds(60)) { $0.hasPrefix("role leader") }
            try await view.waitFor(timeout: .seconds(60), "live on b with every write") {
                $0.connectionState == .live && $0.values["count"] == .int(5)
            }
            _ = try await view.write("count", to: .int(6)).accepted()

            // SIGHUP: the leader re-reads the file; the writer's key is gone.
            try keys.authorize([("read", keys.host, "group")])
            let reload = b.lineCount
            b.signal(SIGHUP)
            _ = try await b.waitForLine("the reload", after: reload, timeout: .seconds(20)) { $0.contains("1 removed") }
            #expect(b.isRunning, "SIGHUP does not stop a group's host")
            try await view.waitFor(timeout: .seconds(30), "the removed key's view cut off") {
                $0.connectionState != .live && $0.lastError?.code == .forbidden
            }
        }
    }

    @Test("a relay given a group's hosts follows the leader through a kill, and so do its views")
    func relayFollowsLeader() async throws {
        try await withTestSystem { system in
            let etcd = try await system.startEtcd()
            let a = try await Self.groupHost("a", in: system, etcd: etcd, expecting: "role leader")
            let b = try await Self.groupHost("b", in: system, etcd: etcd, expecting: "role standby leader=\(a.control)")
            // The standby first: its refusal leads the relay to the leader.
            let relayControl = system.endpoint("relay.control")
            let relay = try system.startProcess(
                executable: try BuiltProducts.executable("statebus"),
                arguments: ["relay", "--upstream", "\(b.control),\(a.control)", "--control", relayControl], name: "relay")
            _ = try await relay.waitForLine("the relay ready", timeout: .seconds(60)) { $0.hasPrefix("ready ") }
            let view = try system.adopt(try Replica(object: Self.object, controlEndpoint: relayControl))
            try await view.waitUntilLive(timeout: .seconds(30))
            _ = try await view.write("count", to: .int(1)).accepted()

            let mark = b.process.lineCount
            a.process.kill()
            _ = try await b.process.waitForLine("b to lead", after: mark, timeout: .seconds(60)) { $0.hasPrefix("role leader") }
            try await view.waitFor(timeout: .seconds(60), "live again through the relay") {
                $0.connectionState == .live && $0.values["count"] == .int(1)
            }
            _ = try await view.write("count", to: .int(2)).accepted()
            try await view.waitFor(timeout: .seconds(30), "the write shown") { $0.values["count"] == .int(2) }
        }
    }

    @Test("bad group configurations are refused with what to fix")
    func badConfiguration() async throws {
        try await withTestSystem { system in
            // No etcd there: the host names the endpoint and how to start etcd.
            let nowhere = try system.startProcess(
                executable: try BuiltProducts.executable("statebus"),
                arguments: [
                    "host", "--control", system.endpoint("x.control"), "--ha", "http://127.0.0.1:9", "--ha-group", "g", "--object", "X"
                ], name: "no-etcd")
            #expect(try await nowhere.exited(timeout: .seconds(60)) != 0)
            #expect(nowhere.output.joined().contains("no etcd answered at http://127.0.0.1:9"), "\(nowhere.output)")

            let etcd = try await system.startEtcd()
            _ = try await Self.groupHost("a", in: system, etcd: etcd, expecting: "role leader")
            // Another object in the same group.
            let other = try system.startProcess(
                executable: try BuiltProducts.executable("statebus"),
                arguments: [
                    "host", "--control", system.endpoint("o.control"), "--ha", etcd.endpoint, "--ha-group", "counters", "--object", "Other"
                ], name: "other")
            #expect(try await other.exited(timeout: .seconds(60)) != 0)
            #expect(other.output.joined().contains("serve the same objects"), "\(other.output)")

            // A wildcard control endpoint with nothing announced.
            let wildcard = try system.startProcess(
                executable: try BuiltProducts.executable("statebus"),
                arguments: [
                    "host", "--control", "tcp://0.0.0.0:*", "--insecure", "--ha", etcd.endpoint, "--ha-group", "w", "--object", "X"
                ], name: "wildcard")
            #expect(try await wildcard.exited(timeout: .seconds(60)) != 0)
            #expect(wildcard.output.joined().contains("--ha-advertise-control"), "\(wildcard.output)")
        }
    }
}
