import Foundation
@_spi(Testing) import StateBus
import StateBusWire
import Testing

@Suite("Host and replicas: join, updates, resync")
struct ReplicationTests {
    @Test("a replica joins with the host's state and follows its changes")
    func joinAndFollow() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        try host.update("sharedText", to: "before join", in: "SharedData")
        let replica = try await Fixtures.liveReplica("SharedData", of: host)
        defer { replica.close() }
        #expect(replica["sharedText"] == "before join")
        #expect(replica.epoch == host.epoch)
        try host.update("sharedText", to: "after join", in: "SharedData")
        try await replica.waitFor(timeout: .seconds(20), "the host's change") { $0["sharedText"] == "after join" }
        #expect(replica.sequence == host.sequence(of: "SharedData"))
    }

    @Test("updates arriving during the snapshot are neither missed nor applied twice")
    func updatesDuringSnapshot() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        let writer = Task.detached {
            for value in 1...3000 {
                try host.update("counter", to: .int(Int64(value)), in: "SharedData")
                if value % 100 == 0 { await Task.yield() }
            }
        }
        let replicas = try await (0..<3).asyncMap { _ in try await Fixtures.liveReplica("SharedData", of: host) }
        defer { for replica in replicas { replica.close() } }
        try await writer.value
        for replica in replicas {
            try await replica.waitFor(timeout: .seconds(20), "the last counter value") { $0["counter"] == 3000 }
            #expect(replica.sequence == host.sequence(of: "SharedData"))
            #expect(replica.values == host.values(of: "SharedData"))
        }
    }

    @Test("a forced sequence gap ends in a resync with identical state")
    func gapResync() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        let replica = try await Fixtures.liveReplica("SharedData", of: host)
        defer { replica.close() }
        host.dropNextPublicationsForTesting(3)
        for value in 1...10 { try host.update("counter", to: .int(Int64(value)), in: "SharedData") }
        try await replica.waitFor(timeout: .seconds(20), "resync after the gap") { $0["counter"] == 10 }
        #expect(replica.values == host.values(of: "SharedData"))
        #expect(replica.sequence == host.sequence(of: "SharedData"))
    }

    @Test("a gap at the tail is found by the heartbeat and repaired")
    func tailGap() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        let replica = try await Fixtures.liveReplica("SharedData", of: host)
        defer { replica.close() }
        host.dropNextPublicationsForTesting(1)
        try host.update("sharedText", to: "lost on the wire", in: "SharedData")
        try await replica.waitFor(timeout: .seconds(20), "the heartbeat-driven resync") { $0["sharedText"] == "lost on the wire" }
    }

    @Test("a host restart (new epoch) is noticed and the replica resyncs")
    func hostRestart() async throws {
        let folder = Fixtures.temporaryFolder()
        let first = try await Fixtures.host(folder: folder)
        try first.update("sharedText", to: "first run", in: "SharedData")
        let replica = try await Fixtures.liveReplica("SharedData", of: first)
        defer { replica.close() }
        #expect(replica["sharedText"] == "first run")
        first.stop()
        try await replica.waitFor(timeout: .seconds(20), "the replica to notice the host is gone") { $0.connectionState == .stale }
        let second = try await Fixtures.host(folder: folder)
        defer { second.stop() }
        #expect(second.epoch != first.epoch)
        try second.update("sharedText", to: "second run", in: "SharedData")
        try await replica.waitFor(timeout: .seconds(20), "the resync with the new host") {
            $0.connectionState == .live && $0.epoch == second.epoch && $0["sharedText"] == "second run"
        }
    }

    @Test("a replica takes its host's endpoint with spaces around it, in a list, and refuses a list with an empty entry")
    func endpointList() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        try host.update("sharedText", to: "listed", in: "SharedData")
        // Spaces, a tab, a no-break space and a zero-width space around the entries, as
        // Foundation's CharacterSet.whitespaces trims them (the second host is never tried:
        // the first leads).
        let replica = try Replica(
            object: "SharedData", controlEndpoint: " \t\(host.controlEndpoint)\u{00A0}\u{200B} , ipc:///nonexistent/other ")
        defer { replica.close() }
        try await replica.waitUntilLive(timeout: .seconds(20))
        #expect(replica["sharedText"] == "listed")
        for list in ["\(host.controlEndpoint),", " , \(host.controlEndpoint)", "\(host.controlEndpoint),\t,ipc:///x"] {
            let error = #expect(throws: StateBusError.self, "\(list)") { _ = try Replica(object: "SharedData", controlEndpoint: list) }
            #expect(error?.code == .badRequest)
            #expect(error?.message.contains("empty entry") == true)
        }
    }

    @Test("a replica whose ipc endpoint holds no socket says that nothing listens there, not that an answer was too large")
    func nothingListening() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("statebus-nothing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let endpoint = "ipc://\(folder.path)/host.control"
        var configuration = ReplicaConfiguration()
        configuration.requestTimeout = .milliseconds(200)
        let replica = try Replica(object: "SharedData", controlEndpoint: endpoint, configuration: configuration)
        defer { replica.close() }
        try await replica.waitFor(timeout: .seconds(20), "the replica's error") { $0.lastError != nil }
        let message = replica.lastError?.message ?? ""
        #expect(replica.lastError?.code == .timeout)
        #expect(message.contains("nothing listens at \(endpoint)"), "\(message)")
        #expect(message.contains("Start the host"), "\(message)")
        #expect(!message.contains("maxIncomingMessageBytes"), "\(message)")
        #expect(replica.connectionState != .live)
        // A path that holds a file, not a socket, is named as such.
        let file = folder.appendingPathComponent("not-a-socket")
        try Data("x".utf8).write(to: file)
        let second = try Replica(object: "SharedData", controlEndpoint: "ipc://\(file.path)", configuration: configuration)
        defer { second.close() }
        try await second.waitFor(timeout: .seconds(20), "the replica's error") { $0.lastError != nil }
        #expect(second.lastError?.message.contains("its path is not a socket") == true, "\(second.lastError?.message ?? "")")
    }

    @Test("an unknown object is reported to the replica, not waited on forever")
    func unknownObject() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        let replica = try Replica(object: "NoSuchThing", controlEndpoint: host.controlEndpoint)
        defer { replica.close() }
        let error = await #expect(throws: StateBusError.self) { try await replica.waitUntilLive(timeout: .seconds(20)) }
        #expect(error?.code == .unknownObject)
        #expect(error?.message.contains("SharedData") == true)
    }

    @Test("a host that serves no object at all is reported as such, not asked again and again")
    func hostWithoutObjects() async throws {
        let host = try await Fixtures.host(objects: [])
        defer { host.stop() }
        let replica = try Replica(object: "SharedData", controlEndpoint: host.controlEndpoint)
        defer { replica.close() }
        let error = await #expect(throws: StateBusError.self) { try await replica.waitUntilLive(timeout: .seconds(20)) }
        #expect(error?.code == .unknownObject)
        #expect(error?.message.contains("no objects at all") == true)
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
