import Foundation
import StateBus
import StateBusTesting
import Testing
import ZeroMQ

/// Issue 13: trust on the network. Every host here is a `statebus host` process on
/// `tcp://127.0.0.1:*` with a key and an authorized keys file; the views are replicas in the
/// test process with keys of their own.
@Suite("CURVE keys, the authorized keys file and roles, against real processes")
struct SecurityTests {
    @Test("a key-less client gets neither a snapshot nor an update, on either socket, and its replica fails with a clear error")
    func keylessClientGetsNothing() async throws {
        try await withTestSystem { system in
            let keys = try TestKeys(folder: system.folder)
            let writer = try keys.client("writer")
            try keys.authorize([("write", writer, "writer")])
            let host = try await TcpHost.start(in: system, arguments: ["--key", keys.hostKeyFile, "--authorized", keys.authorizedFile])

            // Raw key-less sockets on both of the host's sockets, watched for their handshakes.
            let subscriber = try Socket(context: Context(), type: .sub)
            let subscriberEvents = try subscriber.monitor(at: "inproc://keyless-sub", events: SocketEvent.connectionEvents)
            try subscriber.subscribe()
            try subscriber.connect(host.updates)
            let dealer = try Socket(context: subscriber.context, type: .dealer)
            let dealerEvents = try dealer.monitor(at: "inproc://keyless-dealer", events: SocketEvent.connectionEvents)
            try dealer.connect(host.control)
            _ = try dealer.send(Array("any request at all".utf8), wait: false)
            // Both reached the host (a tcp connection made): the explicit signal that they
            // are there to receive whatever the host would send them.
            var seen: [String: [SocketEvent]] = [:]
            for (name, events) in [("updates", subscriberEvents), ("control", dealerEvents)] {
                let event = try await nextEvent(on: events, timeout: .seconds(30))
                #expect(event?.isConnected == true, "\(name): \(String(describing: event))")
                seen[name, default: []] += event.map { [$0] } ?? []
            }

            // The replica with a key joins and writes; the key-less replica fails, saying why.
            let keyed = try host.replica(in: system, security: keys.security(writer))
            try await keyed.waitUntilLive(timeout: .seconds(30))
            for count in 1...5 { _ = try await keyed.write("count", to: .int(Int64(count))).accepted() }
            let keyless = try host.replica(in: system, security: nil)
            let error = await #expect(throws: StateBusError.self) { try await keyless.waitUntilLive(timeout: .seconds(20)) }
            #expect(error?.code == .handshakeFailed, "\(String(describing: error))")
            #expect(error?.message.contains("requires CURVE keys") == true, "\(String(describing: error))")
            #expect(keyless.values.isEmpty, "the key-less replica has no snapshot")

            // Everything above was published while the raw sockets were connected: none of it
            // reached them, and no handshake of theirs ever succeeded (libzmq retries them,
            // each refused: a mechanism mismatch, or a hang-up without detail).
            #expect(try subscriber.tryReceive() == nil, "a key-less SUB received a publication")
            #expect(try dealer.tryReceive() == nil, "a key-less DEALER received a reply")
            for (name, events) in [("updates", subscriberEvents), ("control", dealerEvents)] {
                while let frames = try events.tryReceiveMultipart() {
                    if let event = SocketEvent(frames: frames.map(\.bytes)) { seen[name, default: []].append(event) }
                }
                #expect(!(seen[name] ?? []).contains { $0.isHandshakeSucceeded }, "\(name): a key-less handshake succeeded")
            }
            subscriberEvents.close()
            dealerEvents.close()
        }
    }

    @Test("a read key joins and follows; each of its writes is forbidden and rolled back")
    func readKey() async throws {
        try await withTestSystem { system in
            let keys = try TestKeys(folder: system.folder)
            let (reader, writer) = (try keys.client("reader"), try keys.client("writer"))
            try keys.authorize([("read", reader, "reader"), ("write", writer, "writer")])
            let host = try await TcpHost.start(in: system, arguments: ["--key", keys.hostKeyFile, "--authorized", keys.authorizedFile])
            let readOnly = try host.replica(in: system, security: keys.security(reader))
            let editing = try host.replica(in: system, security: keys.security(writer))
            try await readOnly.waitUntilLive(timeout: .seconds(30))
            try await editing.waitUntilLive(timeout: .seconds(30))

            _ = try await editing.write("name", to: "bea").accepted()
            try await readOnly.waitFor(timeout: .seconds(20), "the reader to follow the write") { $0["name"] == "bea" }

            let receipt = readOnly.write("name", to: "eve")
            let error = await #expect(throws: StateBusError.self) { _ = try await receipt.accepted() }
            #expect(error?.code == .forbidden, "\(String(describing: error))")
            #expect(error?.message.contains("reader") == true, "names the key: \(String(describing: error))")
            try await readOnly.waitFor(timeout: .seconds(20), "the forbidden write to roll back") { $0["name"] == "bea" }
            _ = try await editing.write("count", to: 1).accepted()
            #expect(editing["name"] == "bea", "the host never took the forbidden value")
            #expect(readOnly.connectionState == .live, "a forbidden write does not cost the reader its connection")
        }
    }

    @Test("a write:Profile key writes Profile; a key for another object is forbidden on Profile")
    func writePerObject() async throws {
        try await withTestSystem { system in
            let keys = try TestKeys(folder: system.folder)
            let (profile, other) = (try keys.client("profile"), try keys.client("other"))
            try keys.authorize([("write:Profile", profile, "profile-app"), ("write:SharedData,Settings", other, "other-app")])
            let host = try await TcpHost.start(in: system, arguments: ["--key", keys.hostKeyFile, "--authorized", keys.authorizedFile])
            let allowed = try host.replica(in: system, security: keys.security(profile))
            let refused = try host.replica(in: system, security: keys.security(other))
            try await allowed.waitUntilLive(timeout: .seconds(30))
            try await refused.waitUntilLive(timeout: .seconds(30))

            _ = try await allowed.write("name", to: "bea").accepted()
            let error = await #expect(throws: StateBusError.self) { _ = try await refused.write("name", to: "eve").accepted() }
            #expect(error?.code == .forbidden, "\(String(describing: error))")
            #expect(error?.message.contains("write:Settings,SharedData") == true, "names the role: \(String(describing: error))")
            try await refused.waitFor(timeout: .seconds(20), "the refused view to show the host's value") { $0["name"] == "bea" }
        }
    }

    @Test("a view id is bound to the key that said hello: another key naming it is refused")
    func viewIDBoundToKey() async throws {
        try await withTestSystem { system in
            let keys = try TestKeys(folder: system.folder)
            let (first, second) = (try keys.client("first"), try keys.client("second"))
            try keys.authorize([("write", first, "first"), ("write", second, "second")])
            let host = try await TcpHost.start(in: system, arguments: ["--key", keys.hostKeyFile, "--authorized", keys.authorizedFile])
            let owner = try host.replica(in: system, security: keys.security(first), viewID: "shared-id")
            try await owner.waitUntilLive(timeout: .seconds(30))
            owner.close()
            let impostor = try host.replica(in: system, security: keys.security(second), viewID: "shared-id")
            let error = await #expect(throws: StateBusError.self) { try await impostor.waitUntilLive(timeout: .seconds(20)) }
            #expect(error?.code == .forbidden, "\(String(describing: error))")
            #expect(error?.message.contains("belongs to another key") == true, "\(String(describing: error))")
            // The owner's key gets its id back.
            let again = try host.replica(in: system, security: keys.security(first), viewID: "shared-id")
            try await again.waitUntilLive(timeout: .seconds(30))
        }
    }

    @Test("an unauthorized key, or a wrong host key, fails within the timeout with an error that says which")
    func unauthorizedOrWrongHostKey() async throws {
        try await withTestSystem { system in
            let keys = try TestKeys(folder: system.folder)
            let (listed, stranger) = (try keys.client("listed"), try keys.client("stranger"))
            try keys.authorize([("read", listed, "listed")])
            let host = try await TcpHost.start(in: system, arguments: ["--key", keys.hostKeyFile, "--authorized", keys.authorizedFile])

            let unlisted = try host.replica(in: system, security: keys.security(stranger))
            let refused = await #expect(throws: StateBusError.self) { try await unlisted.waitUntilLive(timeout: .seconds(20)) }
            #expect(refused?.code == .forbidden, "\(String(describing: refused))")
            #expect(refused?.message.contains(stranger.publicKey) == true, "names the key: \(String(describing: refused))")

            let otherHost = try CurveKeyPair.generate().publicKey
            let misled = try host.replica(in: system, security: keys.security(listed, hostKey: otherHost))
            let failed = await #expect(throws: StateBusError.self) { try await misled.waitUntilLive(timeout: .seconds(20)) }
            #expect(failed?.code == .handshakeFailed, "\(String(describing: failed))")
            #expect(failed?.message.contains("host key") == true, "\(String(describing: failed))")
        }
    }

    @Test("a key removed from the authorized keys file and SIGHUP: its view is cut off and cannot rejoin; the others go on")
    func removedKeyOnReload() async throws {
        try await withTestSystem { system in
            let keys = try TestKeys(folder: system.folder)
            let (staying, leaving) = (try keys.client("staying"), try keys.client("leaving"))
            try keys.authorize([("write", staying, "staying"), ("write", leaving, "leaving")])
            let host = try await TcpHost.start(in: system, arguments: ["--key", keys.hostKeyFile, "--authorized", keys.authorizedFile])
            let stays = try host.replica(in: system, security: keys.security(staying))
            let leaves = try host.replica(in: system, security: keys.security(leaving))
            try await stays.waitUntilLive(timeout: .seconds(30))
            try await leaves.waitUntilLive(timeout: .seconds(30))
            _ = try await leaves.write("name", to: "before").accepted()

            try keys.authorize([("write", staying, "staying")])
            let mark = host.process.lineCount
            host.process.signal(SIGHUP)
            try await host.process.waitForLine("the reload", after: mark, timeout: .seconds(20)) { $0.contains("1 removed") }

            try await leaves.waitFor(timeout: .seconds(30), "the removed key's view to be cut off") { replica in
                replica.connectionState != .live && replica.lastError?.code == .forbidden
            }
            let rejoining = try host.replica(in: system, security: keys.security(leaving))
            let error = await #expect(throws: StateBusError.self) { try await rejoining.waitUntilLive(timeout: .seconds(20)) }
            #expect(error?.code == .forbidden, "\(String(describing: error))")

            // The other view resynchronises by itself (its subscription was closed too) and
            // goes on writing and following.
            try await stays.waitUntilLive(timeout: .seconds(30))
            _ = try await stays.write("name", to: "after").accepted()
            let watcher = try host.replica(in: system, security: keys.security(staying))
            try await watcher.waitUntilLive(timeout: .seconds(30))
            #expect(watcher["name"] == "after")
            _ = try await stays.write("count", to: 7).accepted()
            try await watcher.waitFor(timeout: .seconds(20), "the staying view's update") { $0["count"] == 7 }
        }
    }

    @Test("the bytes on the wire carry no plaintext with keys, and do without (so this test can fail)")
    func noPlaintextOnTheWire() async throws {
        try await withTestSystem { system in
            let keys = try TestKeys(folder: system.folder)
            let writer = try keys.client("writer")
            try keys.authorize([("write", writer, "writer")])
            for keyed in [false, true] {
                let marker = "plaintext-marker-\(UUID().uuidString)"
                let host = try await TcpHost.start(
                    in: system, name: keyed ? "keyed" : "open",
                    arguments: keyed ? ["--key", keys.hostKeyFile, "--authorized", keys.authorizedFile] : ["--insecure"])
                let relay = try RecordingRelay(to: host.control)
                defer { relay.close() }
                let replica = try host.replica(in: system, security: keyed ? keys.security(writer) : nil, control: relay.endpoint)
                try await replica.waitUntilLive(timeout: .seconds(30))
                _ = try await replica.write("name", to: .string(marker)).accepted()
                #expect(relay.bytes.count > 100, "traffic went through the relay")
                if keyed {
                    #expect(!relay.contains(marker), "the written value crossed the wire in plaintext despite CURVE")
                    #expect(!relay.contains("Profile"), "the object's name crossed the wire in plaintext despite CURVE")
                } else {
                    #expect(relay.contains(marker), "without keys the value is on the wire: the relay records what it forwards")
                }
                replica.close()
            }
        }
    }

    /// The next handshake event on a monitor, or `nil` past the deadline: awaited on a thread
    /// of its own, so no thread of the cooperative pool blocks on the socket.
    private func nextEvent(on monitor: Socket, timeout: Duration) async throws -> SocketEvent? {
        let handOff = MonitorHandOff(monitor)
        return try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try handOff.nextEvent(within: timeout) }) }
        }
    }
}

/// Lends a monitor socket to a waiting thread for one event.
private final class MonitorHandOff: @unchecked Sendable {
    // Why `@unchecked Sendable` is sound: the test's task does not touch the socket while it
    // awaits the thread, and libzmq allows a socket to move between threads with a full
    // memory barrier, which starting the thread and resuming the continuation both are.
    let monitor: Socket

    init(_ monitor: Socket) { self.monitor = monitor }

    func nextEvent(within timeout: Duration) throws -> SocketEvent? {
        let poller = Poller()
        _ = poller.add(monitor, events: .readable)
        guard try !poller.poll(timeout: timeout).isEmpty, let frames = try monitor.tryReceiveMultipart() else { return nil }
        return SocketEvent(frames: frames.map(\.bytes))
    }
}
