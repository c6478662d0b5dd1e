import Foundation
import StateBus
import StateBusRuntime
import StateBusTesting
import Testing

/// `statebus views` and ``ConnectedView/list(controlEndpoint:timeout:security:)``: who is
/// connected to a host, with real view processes joining and leaving.
@Suite("statebus views lists the views connected to a host")
struct ConnectedViewsTests {
    static let counter = ObjectDefinition("Counter", properties: [PropertyDefinition("count", default: 0)])

    @Test("a view is listed with its node name from its hello until its goodbye")
    func joinAndLeave() async throws {
        try await withTestSystem { system in
            let host = try await system.startHost([Self.counter])
            let none = try await ConnectedView.list(controlEndpoint: host.controlEndpoint)
            #expect(none.views.isEmpty)

            let watcher = try system.startProcess(
                executable: system.statebus,
                arguments: ["watch", "--control", host.controlEndpoint, "--object", "Counter", "--name", "kitchen-panel"], name: "watch")
            try await watcher.waitForLine("the watcher's first state") { $0.hasPrefix("Counter @ sequence 0 (live)") }

            let listed = try await ConnectedView.list(controlEndpoint: host.controlEndpoint)
            let view = try #require(listed.views.first, "\(listed)")
            #expect(listed.views.count == 1 && listed.omitted == 0, "\(listed)")
            #expect(view.nodeName == "kitchen-panel")
            #expect(!view.isRelay && !view.viewID.isEmpty && view.keyName.isEmpty)

            let text = try await runStatebus(["views", "--control", host.controlEndpoint])
            #expect(text.status == 0)
            #expect(text.output.first == "1 connected", "\(text.output)")
            #expect(text.output.contains { $0.hasPrefix("  \(view.viewID) (node kitchen-panel, connected ") }, "\(text.output)")
            let json = try await runStatebus(["views", "--control", host.controlEndpoint, "--json"])
            #expect(json.status == 0)
            #expect(json.output.last?.contains(#""node":"kitchen-panel""#) == true, "\(json.output)")
            #expect(json.output.last?.contains(#""viewID":"\#(view.viewID)""#) == true, "\(json.output)")

            // SIGINT: the watcher closes its replica, which says goodbye; the host forgets it
            // at once (not after the view-id lease).
            watcher.signal(SIGINT)
            #expect(try await watcher.exited(timeout: .seconds(30)) == 0)
            try await waitUntil("the host to forget the view that said goodbye", timeout: .seconds(5)) {
                (try? await ConnectedView.list(controlEndpoint: host.controlEndpoint).views.isEmpty) == true
            }
        }
    }

    @Test("a view that closes while it reconnects to a busy host still says goodbye, waiting up to its goodbyeLinger")
    func goodbyeWhileReconnecting() async throws {
        try await withTestSystem { system in
            let host = try await system.startHostProcess(object: "Counter", properties: ["count:int=0"])
            var configuration = ReplicaConfiguration(nodeName: "closing-view")
            // Far longer than this test can be held up: in a full run the test's own task
            // can wait tens of seconds for a thread, and a close() that had waited out a
            // 30 s linger by then returned before the check below looked.
            configuration.goodbyeLinger = .seconds(600)
            let replica = try Replica(object: "Counter", controlEndpoint: host.controlEndpoint, configuration: configuration)
            try await replica.waitUntilLive(timeout: .seconds(30))

            // The host stops answering: the view hears no heartbeat, drops its connection and
            // opens a new one, whose handshake the stopped host cannot finish. A goodbye sent
            // now waits in libzmq; before, it was dropped 100 ms after the close (or when the
            // process exited), and the host listed the view until its lease ran out.
            host.process.pause()
            defer { host.process.resume() }
            // Counted once the host is stopped, so the connection waited for below is one the
            // stopped host accepted but cannot greet: on a busy machine the view can have
            // reconnected while it joined (a count of 1 then meant a connection to a running
            // host, where the goodbye left at once).
            let reconnectionsBefore = replica.statistics.reconnections
            try await waitUntil("the view to see the host silent") { replica.connectionState == .stale }
            // And to have opened its new connection: closed before that, on the old one, the
            // goodbye would go straight into the kernel's buffer of a connection the host
            // had already accepted, and close() would rightly return at once.
            try await waitUntil("the view to reconnect", timeout: .seconds(30)) { replica.statistics.reconnections > reconnectionsBefore }
            let closed = ClosingThread(closing: replica)
            // The engine marks the replica closed once its goodbye is queued, while `close()`
            // still waits for it to leave.
            try await waitUntil("the view's engine to close") { replica.connectionState == .closed }
            // Not synchronisation: the host stays busy a little longer, twice the 100 ms the
            // goodbye used to be kept for.
            try await Task.sleep(for: .milliseconds(200))
            #expect(!closed.hasReturned, "close() returned before its goodbye could leave")
            host.process.resume()
            try await waitUntil("close() to return once the goodbye left", timeout: .seconds(30)) { closed.hasReturned }
            // Well inside the 10 s lease that forgets a view that left without a word (the
            // test's own observer of the host stays listed).
            try await waitUntil("the host to forget the view that said goodbye", timeout: .seconds(5)) {
                let listed = try? await ConnectedView.list(controlEndpoint: host.controlEndpoint)
                return listed.map { !$0.views.isEmpty && !$0.views.contains { $0.nodeName == "closing-view" } } == true
            }
        }
    }

    /// Calls a replica's blocking `close()` on a thread of its own, so the test can go on
    /// (the threads that run tasks are not to be blocked).
    final class ClosingThread: Sendable {
        private let returned = Locked(false)

        init(closing replica: Replica) {
            let thread = Thread { [self] in
                replica.close()
                returned.withLock { $0 = true }
            }
            thread.start()
        }

        var hasReturned: Bool { returned.withLock { $0 } }
    }

    @Test("a relay is listed as a relay by its host, and lists its own views")
    func throughRelay() async throws {
        try await withTestSystem { system in
            let host = try await system.startHost([Self.counter])
            let relayControl = system.endpoint("relay.control")
            let relay = try system.startProcess(
                executable: system.statebus,
                arguments: ["relay", "--upstream", host.controlEndpoint, "--control", relayControl], name: "relay")
            try await relay.waitForLine("the relay's readiness", timeout: .seconds(60)) { $0.hasPrefix("ready ") }
            let view = try await system.startView(of: "Counter", at: relayControl, name: "behind-relay")
            try await waitUntil(view, "count", equals: 0)

            let atHost = try await ConnectedView.list(controlEndpoint: host.controlEndpoint)
            #expect(atHost.views.count == 1 && atHost.views.first?.isRelay == true, "\(atHost)")
            try await waitUntil("the relay to list its view", timeout: .seconds(10)) {
                let atRelay = try await ConnectedView.list(controlEndpoint: relayControl)
                return atRelay.views.contains { !$0.isRelay }
            }
        }
    }

    @Test("an unreachable endpoint is a timeout that says what to check")
    func silence() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("statebus-views-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try await runStatebus(["views", "--control", "ipc://\(folder.path)/nobody", "--timeout", "1"])
        #expect(run.status != 0)
        #expect(run.output.contains { $0.contains("no host answered at ipc://\(folder.path)/nobody within") }, "\(run.output)")

        // Without --timeout, STATEBUS_TIMEOUT sets the wait; one that is not a number is
        // refused, naming the variable; --timeout wins over it.
        let statebus = try BuiltProducts.executable("statebus")
        let nobody = ["views", "--control", "ipc://\(folder.path)/nobody"]
        let fromEnvironment = try await OneShotCommand.run(statebus, nobody, environment: ["STATEBUS_TIMEOUT": "1.5"])
        #expect(fromEnvironment.status != 0)
        #expect(fromEnvironment.output.contains { $0.contains("within 1.5 seconds") }, "\(fromEnvironment.output)")
        let unreadable = try await OneShotCommand.run(statebus, nobody, environment: ["STATEBUS_TIMEOUT": "soon"])
        #expect(unreadable.status != 0)
        #expect(
            unreadable.output.contains { $0.contains("STATEBUS_TIMEOUT must be a positive number of seconds (such as 30 or 2.5), got 'soon'") },
            "\(unreadable.output)")
        let flagWins = try await OneShotCommand.run(statebus, nobody + ["--timeout", "1"], environment: ["STATEBUS_TIMEOUT": "soon"])
        #expect(flagWins.output.contains { $0.contains("within 1.0 seconds") }, "\(flagWins.output)")
    }
}
