import Foundation
import StateBusTesting
import Testing

/// `statebus relay` with real processes: a host, a relay, a relay of that relay, one view
/// through both relays and one on the host itself.
@Suite("Relays: a view through two relays converges with a view on the host")
struct RelayProcessTests {

    /// Waits until both views print, after their line `marks`, a state whose values
    /// contain `fragment`.
    static func waitForBoth(_ views: [NodeProcess], after marks: [Int], _ fragment: String, _ description: String) async throws {
        for (view, mark) in zip(views, marks) {
            try await view.waitForLine("\(view.name) shows \(description)", after: mark, timeout: .seconds(60)) {
                $0.contains(#""values":{"#) && $0.contains(fragment)
            }
        }
    }

    @Test("host changes, the relayed view's edits, a refused edit and a host restart reach both views alike")
    func twoRelays() async throws {
        let folder = "/tmp/sbr-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let statebus = try BuiltProducts.executable("statebus")
        let hostControl = "ipc://\(folder)/host"
        let firstRelay = "ipc://\(folder)/relay1"
        let secondRelay = "ipc://\(folder)/relay2"

        let host = try NodeProcess(
            executable: statebus,
            arguments: [
                "host", "--control", hostControl, "--object", "Counter", "--property", "count:int=0", "--property", "label:string!=fixed",
                "--heartbeat-ms", "200", "--no-persistence"
            ],
            name: "host")
        defer { host.terminate() }
        try await host.waitForLine("the host ready") { $0.hasPrefix("ready ") }
        let relay1 = try NodeProcess(executable: statebus, arguments: ["relay", "--upstream", hostControl, "--control", firstRelay], name: "relay1")
        defer { relay1.terminate() }
        try await relay1.waitForLine("relay 1 ready") { $0.hasPrefix("ready ") }
        let relay2 = try NodeProcess(
            executable: statebus, arguments: ["relay", "--upstream", firstRelay, "--control", secondRelay, "--name", "relay2"], name: "relay2")
        defer { relay2.terminate() }
        try await relay2.waitForLine("relay 2 ready") { $0.hasPrefix("ready ") }

        let relayed = try NodeProcess(
            executable: statebus, arguments: ["watch", "--json", "--edits", "--control", secondRelay, "--object", "Counter"], name: "relayed view")
        defer { relayed.terminate() }
        let direct = try NodeProcess(
            executable: statebus, arguments: ["watch", "--json", "--control", hostControl, "--object", "Counter"], name: "direct view")
        defer { direct.terminate() }
        let views = [relayed, direct]
        try await Self.waitForBoth(views, after: [0, 0], #""count":0,"label":"fixed""#, "the host's first state")

        // A change made at the host.
        var marks = views.map(\.lineCount)
        var run = try await runStatebus(["set", "--control", hostControl, "--object", "Counter", "count", "5"])
        #expect(run.status == 0, "\(run.output)")
        try await Self.waitForBoth(views, after: marks, #""count":5,"#, "the host's change")

        // An edit by the view behind two relays: accepted by the host, seen by both.
        marks = views.map(\.lineCount)
        relayed.send(line: "count 9")
        try await relayed.waitForLine("the relayed edit's answer", after: marks[0], timeout: .seconds(60)) { $0.contains(#""event":"write""#) }
        #expect(relayed.output.contains { $0.contains(#""event":"write""#) && $0.contains(#""accepted":true"#) }, "\(relayed.output.suffix(5))")
        try await Self.waitForBoth(views, after: marks, #""count":9,"#, "the relayed view's edit")
        run = try await runStatebus(["get", "--control", hostControl, "--object", "Counter", "count"])
        #expect(run.output.last == "9", "the host holds \(run.output)")

        // A refused edit comes back through both relays with the host's reason.
        let refusedMark = relayed.lineCount
        relayed.send(line: #"label "other""#)
        try await relayed.waitForLine("the refused edit's answer", after: refusedMark, timeout: .seconds(60)) {
            $0.contains(#""event":"write""#) && $0.contains(#""accepted":false"#)
        }
        #expect(
            relayed.output.suffix(from: refusedMark).contains { $0.contains("readOnly") || $0.contains("read-only") }, "\(relayed.output.suffix(3))")

        // The host killed and started again (a new epoch): both relays join again, their
        // view resynchronises through them, and the new host's changes reach both views.
        marks = views.map(\.lineCount)
        host.kill()
        let hostMark = host.lineCount
        try host.start()
        try await host.waitForLine("the host ready again", after: hostMark) { $0.hasPrefix("ready ") }
        try await Self.waitForBoth(views, after: marks, #""count":0,"#, "the new host's state")
        marks = views.map(\.lineCount)
        run = try await runStatebus(["set", "--control", hostControl, "--object", "Counter", "count", "11"])
        #expect(run.status == 0, "\(run.output)")
        try await Self.waitForBoth(views, after: marks, #""count":11,"#, "the new host's change")
        marks = views.map(\.lineCount)
        let editMark = relayed.lineCount
        relayed.send(line: "count 12")
        try await relayed.waitForLine("the relayed edit after the restart", after: editMark, timeout: .seconds(60)) {
            $0.contains(#""event":"write""#) && $0.contains(#""accepted":true"#)
        }
        try await Self.waitForBoth(views, after: marks, #""count":12,"#, "the relayed edit after the restart")
        #expect(host.isRunning && relay1.isRunning && relay2.isRunning && relayed.isRunning && direct.isRunning)
    }
}

/// A relay's views of protocol version 1 across the relay's own re-join of its upstream.
@Suite("Relays: version-1 views keep their batches when the relay joins its upstream again")
struct RelayVersion1Tests {
    @Test("a version-1 subscriber of a relay gets the batches made after the relay joined its stopped-and-resumed host again")
    func version1BatchesAfterRejoin() async throws {
        let folder = "/tmp/sbr-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let statebus = try BuiltProducts.executable("statebus")
        let hostControl = "ipc://\(folder)/host"
        let host = try NodeProcess(
            executable: statebus,
            arguments: [
                "host", "--control", hostControl, "--object", "Counter", "--property", "count:int=0", "--heartbeat-ms", "200", "--no-persistence"
            ],
            name: "host")
        defer { host.terminate() }
        try await host.waitForLine("the host ready") { $0.hasPrefix("ready ") }
        let relay = try NodeProcess(
            executable: statebus, arguments: ["relay", "--upstream", hostControl, "--control", "ipc://\(folder)/relay"], name: "relay")
        defer { relay.terminate() }
        try await relay.waitForLine("the relay ready") { $0.hasPrefix("ready ") }
        let ready = try #require(relay.output.first { $0.hasPrefix("ready ") })
        let updates = try #require(ready.split(separator: " ").first { $0.hasPrefix("updates=") }?.dropFirst("updates=".count))

        // A subscriber of version 1's batches (topic u/Counter) on the relay.
        let tally = PublicationTally(updatesEndpoint: String(updates), object: "Counter")
        defer { tally.stop() }
        /// Sets `count` on the host and waits up to `timeout` for the subscriber to see it.
        func setAndSee(_ value: Int64, timeout: Duration) async throws -> Bool {
            let run = try await runStatebus(["set", "--control", hostControl, "--object", "Counter", "count", "\(value)"])
            #expect(run.status == 0, "\(run.output)")
            return await tally.waitForValue(of: "count", atLeast: value, timeout: timeout)
        }
        // The subscription reaches the relay in its own time: set values until one is seen.
        var value: Int64 = 0
        let subscribedBy = ContinuousClock.now + .seconds(60)
        repeat {
            value += 1
        } while try await !setAndSee(value, timeout: .seconds(1)) && ContinuousClock.now < subscribedBy
        try #require(tally.highest(of: "count") == value, "the subscriber never saw a batch through the relay")

        // The host stopped: the relay hears nothing for three heartbeats and joins again.
        let mark = relay.lineCount
        host.pause()
        try await relay.waitForLine("the relay's re-join", after: mark, timeout: .seconds(30)) { $0.contains("again") }
        host.resume()
        try await relay.waitForLine("the relay relaying again", after: mark, timeout: .seconds(30)) {
            $0.contains("relaying") && $0.hasSuffix("again")
        }

        #expect(
            try await setAndSee(1000, timeout: .seconds(20)),
            "no version-1 batch after the re-join; highest seen \(String(describing: tally.highest(of: "count")))")
    }
}

/// Launch files with relays, and launch files of views whose host runs elsewhere.
@Suite("Relays in launch files")
struct RelayLaunchTests {
    @Test("a relay node joins a host elsewhere (upstream:), its view joins through it, and a file of views only joins that relay (control:)")
    func relayAndRemoteViews() async throws {
        try await withTestSystem { system in
            let host = try await system.startHostProcess(object: "Counter", properties: ["count:int=4"])
            let edge = system.endpoint("edge.control")
            let relayed = try system.launch(
                yaml: """
                    name: edge
                    nodes:
                      - name: edge
                        role: relay
                        upstream: \(host.controlEndpoint)
                        control: \(edge)
                        executable: statebus
                        arguments: [relay]
                      - name: near
                        role: view
                        objects: [Counter]
                        executable: statebus
                        arguments: [watch, --json]
                    """, name: "edge.yaml")
            let remote = try system.launch(
                yaml: """
                    name: only-views
                    nodes:
                      - name: far
                        role: view
                        objects: [Counter]
                        control: \(edge)
                        executable: statebus
                        arguments: [watch, --json]
                    """, name: "views.yaml")
            let near = try await relayed.node("near")
            let far = try await remote.node("far")
            for view in [near, far] {
                try await view.waitForLine("\(view.name) shows the host's value", timeout: .seconds(60)) { $0.contains(#""values":{"count":4}"#) }
            }
            let set = try system.startProcess(
                executable: system.statebus, arguments: ["set", "--control", host.controlEndpoint, "--object", "Counter", "count", "8"], name: "set")
            #expect(try await set.exited(timeout: .seconds(60)) == 0, "\(set.output)")
            for view in [near, far] {
                try await view.waitForLine("\(view.name) shows the change", timeout: .seconds(60)) { $0.contains(#""values":{"count":8}"#) }
            }
            #expect(relayed.output.contains { $0.contains("launch: edge answers on \(edge)") }, "the relay was awaited before its view started")
            #expect(try await remote.stop() == 0)
            #expect(try await relayed.stop() == 0)
        }
    }
}

/// `statebus load`: many views in one process.
@Suite("statebus load: many independent views in one process")
struct LoadProcessTests {
    @Test("300 views in one process join a relay, each with a view id of its own, and all apply a host change")
    func manyViewsThroughRelay() async throws {
        try await withTestSystem { system in
            let host = try await system.startHostProcess(object: "Counter", properties: ["count:int=0"])
            let relay = try system.startProcess(
                executable: system.statebus, arguments: ["relay", "--upstream", host.controlEndpoint, "--control", system.endpoint("relay.control")],
                name: "relay")
            try await relay.waitForLine("the relay ready", timeout: .seconds(60)) { $0.hasPrefix("ready ") }
            let load = try system.startProcess(
                executable: system.statebus,
                arguments: ["load", "--control", system.endpoint("relay.control"), "--object", "Counter", "--views", "300", "--report-ms", "0"],
                name: "load")
            try await load.waitForLine("300 views live", timeout: .seconds(120)) { $0.hasPrefix("ready views=300") }
            let set = try system.startProcess(
                executable: system.statebus, arguments: ["set", "--control", host.controlEndpoint, "--object", "Counter", "count", "3"], name: "set")
            #expect(try await set.exited(timeout: .seconds(60)) == 0, "\(set.output)")
            var mark = load.lineCount
            load.send(line: "wait 1")
            try await load.waitForLine("every view at sequence 1", after: mark, timeout: .seconds(60)) { $0.hasPrefix("reached sequence=1 ") }
            mark = load.lineCount
            load.send(line: "status")
            let status = try await load.waitForLine("a status line", after: mark, timeout: .seconds(60)) { $0.hasPrefix("status ") }
            #expect(status.contains("live=300 stale=0 syncing=0 min-sequence=1 max-sequence=1 resyncs=0"), "\(status)")
            #expect(host.process.isRunning && relay.isRunning)
        }
    }
}
