import Foundation
@_spi(Testing) import StateBus
import Testing

/// ``StateRelay`` in one process: a host, a relay and replicas on either side.
@Suite("StateRelay: writes, answers and gaps through a relay")
struct StateRelayTests {
    /// A relay of `host`, synced; a `patient` one waits 60 heartbeats and 10 s a request
    /// before it reconnects upstream for silence.
    static func relay(of host: StateHost, folder: String, name: String = "relay", patient: Bool = false) async throws -> StateRelay {
        var configuration = RelayConfiguration(upstream: host.controlEndpoint, name: name, controlEndpoint: "ipc://\(folder)/\(name)")
        if patient {
            configuration.missedHeartbeatsBeforeStale = 60
            configuration.upstreamRequestTimeout = .seconds(10)
        }
        let relay = try await StateRelay(configuration: configuration)
        try await relay.waitUntilSynced(timeout: .seconds(20))
        return relay
    }

    @Test("1,000 pipelined writes through a relay are each answered once, in order; a rejection comes back with the host's reason")
    func writesThroughRelay() async throws {
        let folder = Fixtures.temporaryFolder()
        let host = try await Fixtures.host(folder: folder)
        defer { host.stop() }
        // Tolerant of silence (60 missed heartbeats of 200 ms on both links, 10 s a request):
        // a view or relay that reconnects for silence sends its unanswered writes again, as it must, and the count
        // of forwarded writes below would then include those copies (1,389 for 1,000 in one
        // full run on a loaded machine).
        let relay = try await Self.relay(of: host, folder: folder, patient: true)
        defer { relay.stop() }
        let relayed = try Replica(
            object: "SharedData", controlEndpoint: relay.controlEndpoint,
            configuration: ReplicaConfiguration(nodeName: "relayed", missedHeartbeatsBeforeStale: 60, requestTimeout: .seconds(10)))
        defer { relayed.close() }
        try await relayed.waitUntilLive(timeout: .seconds(20))

        let receipts = (Int64(1)...1_000).map { relayed.write("counter", to: .int($0)) }
        var sequences: [UInt64] = []
        for receipt in receipts { sequences.append(try await receipt.accepted()) }
        #expect(sequences == sequences.sorted(), "answers out of order")
        let last: Value = .int(1_000)
        #expect(host.value(of: "counter", in: "SharedData") == last)
        #expect(host.statistics.writesAccepted == 1_000)
        #expect(
            relay.statistics.forwardedWrites == 1_000,
            "reconnections: view \(relayed.statistics.reconnections), relay upstream snapshots \(relay.statistics.upstreamSnapshots)")

        let profile = try Replica(object: "Profile", controlEndpoint: relay.controlEndpoint)
        defer { profile.close() }
        try await profile.waitUntilLive(timeout: .seconds(20))
        let refused = profile.write("user", to: ["username": "bo", "email": "no-at-sign"])
        await #expect(throws: StateBusError.self) { _ = try await refused.accepted() }
        do {
            _ = try await refused.accepted()
        } catch let error as StateBusError {
            #expect(error.code == .validationFailed)
            #expect(error.message.contains("@"), "the host's reason: \(error.message)")
        }
    }

    @Test("a publication lost between host and relay: the relay takes a new snapshot and its views converge")
    func gapUpstream() async throws {
        let folder = Fixtures.temporaryFolder()
        let host = try await Fixtures.host(folder: folder)
        defer { host.stop() }
        let relay = try await Self.relay(of: host, folder: folder)
        defer { relay.stop() }
        let relayed = try Replica(object: "SharedData", controlEndpoint: relay.controlEndpoint)
        defer { relayed.close() }
        try await relayed.waitUntilLive(timeout: .seconds(20))
        let snapshotsBefore = relay.statistics.upstreamSnapshots

        host.dropNextPublicationsForTesting(1)
        try host.update("sharedText", to: "lost on the wire", in: "SharedData")
        try host.update("counter", to: 42, in: "SharedData")
        let expected: [String: Value] = ["sharedText": "lost on the wire", "counter": 42]
        try await relayed.waitFor(timeout: .seconds(20), "the relayed replica to hold the host's state") { $0.values == expected }
        #expect(relay.statistics.upstreamSnapshots > snapshotsBefore, "the relay never took a new snapshot")
        #expect(relay.statistics.relayedPublications > 0)
    }

    /// A host of ``SizeLimitTests/blob`` taking values up to 200 KB, and a relay of it that
    /// reads messages of at most 64 KiB.
    private static func blobHostAndSmallRelay(heartbeat: Duration, upstreamRequestTimeout: Duration? = nil) async throws -> (StateHost, StateRelay) {
        let folder = Fixtures.temporaryFolder()
        var hostConfiguration = HostConfiguration(
            name: "large", controlEndpoint: "ipc://\(folder)/control", heartbeatInterval: heartbeat, persistence: .disabled)
        hostConfiguration.limits = HostLimits(maxPropertyBytes: 200_000, maxObjectBytes: 400_000)
        let host = try await StateHost(objects: [SizeLimitTests.blob], configuration: hostConfiguration)
        var configuration = RelayConfiguration(upstream: host.controlEndpoint, name: "small", controlEndpoint: "ipc://\(folder)/small")
        configuration.maxIncomingMessageBytes = 64 << 10
        if let upstreamRequestTimeout { configuration.upstreamRequestTimeout = upstreamRequestTimeout }
        do {
            return (host, try await StateRelay(configuration: configuration))
        } catch {
            host.stop()
            throw error
        }
    }

    @Test("a relay sent more than its maxIncomingMessageBytes joins its upstream again, and its views get the host's value once it fits")
    func messageLargerThanTheRelayReads() async throws {
        let (host, relay) = try await Self.blobHostAndSmallRelay(heartbeat: .milliseconds(200), upstreamRequestTimeout: .milliseconds(300))
        defer { host.stop() }
        defer { relay.stop() }
        try await relay.waitUntilSynced(timeout: .seconds(20))
        let relayed = try Replica(object: "Blob", controlEndpoint: relay.controlEndpoint)
        defer { relayed.close() }
        try await relayed.waitUntilLive(timeout: .seconds(20))
        let reconnectsBefore = relay.statistics.upstreamReconnects

        // The publication of this value and every snapshot holding it are larger than the
        // relay reads: libzmq drops each connection that brings one, for good.
        try host.update("text", to: .string(String(repeating: "L", count: 100_000)), in: "Blob")
        try await relay.waitFor(timeout: .seconds(30), "the relay to join its upstream again, twice") {
            $0.statistics.upstreamReconnects >= reconnectsBefore + 2
        }
        #expect(relayed["text"] == .string(""))  // the views never see a part of the value

        try host.update("text", to: .string("fits again"), in: "Blob")
        try await relayed.waitFor(timeout: .seconds(30), "the relayed view to get the value that fits") { replica in
            replica.connectionState == .live && replica["text"] == .string("fits again")
        }
    }

    @Test("a relay whose upstream updates connection libzmq dropped joins again, though its control connection still answers")
    func droppedUpdatesConnectionWithLiveControl() async throws {
        // Heartbeats every second: 3 s of silence, longer than the relay's 2 s between pings,
        // so the control connection answers all along while the updates connection is dead
        // (the relay then waits four times that, 12 s, before it joins again).
        let (host, relay) = try await Self.blobHostAndSmallRelay(heartbeat: .seconds(1))
        defer { host.stop() }
        defer { relay.stop() }
        try await relay.waitUntilSynced(timeout: .seconds(20))
        let relayed = try Replica(object: "Blob", controlEndpoint: relay.controlEndpoint)
        defer { relayed.close() }
        try await relayed.waitUntilLive(timeout: .seconds(20))

        // Only the publication is too large for the relay (libzmq drops the updates connection
        // that brings it, for good); the value is small again before the relay asks for a
        // snapshot, so the next join fits.
        try host.update("text", to: .string(String(repeating: "L", count: 100_000)), in: "Blob")
        try host.update("text", to: .string("fits again"), in: "Blob")
        try await relayed.waitFor(timeout: .seconds(30), "the relayed view to get the value after the relay joined again") { replica in
            replica.connectionState == .live && replica["text"] == .string("fits again")
        }
        #expect(relay.statistics.upstreamReconnects >= 1)
    }

    @Test("a relay of a relay serves the same state, and a relay refuses a network address without --insecure")
    func chainAndExposure() async throws {
        let folder = Fixtures.temporaryFolder()
        let host = try await Fixtures.host(folder: folder)
        defer { host.stop() }
        let first = try await Self.relay(of: host, folder: folder, name: "first")
        defer { first.stop() }
        let second = try await StateRelay(
            configuration: RelayConfiguration(upstream: first.controlEndpoint, name: "second", controlEndpoint: "ipc://\(folder)/second"))
        defer { second.stop() }
        try await second.waitUntilSynced(timeout: .seconds(20))
        try host.update("sharedText", to: "twice relayed", in: "SharedData")
        let replica = try Replica(object: "SharedData", controlEndpoint: second.controlEndpoint)
        defer { replica.close() }
        let expected: Value = "twice relayed"
        try await replica.waitFor(timeout: .seconds(20), "the text through two relays") { $0.values["sharedText"] == expected }

        do {
            let exposed = try await StateRelay(
                configuration: RelayConfiguration(upstream: host.controlEndpoint, controlEndpoint: "tcp://0.0.0.0:*"))
            exposed.stop()
            Issue.record("a relay served a network address without keys or --insecure")
        } catch let error as StateBusError {
            #expect(error.code == .unsafeEndpoint)
            #expect(error.message.contains("--insecure"), "\(error.message)")
        }
    }
}
