import Foundation
@_spi(Testing) import StateBus
import StateBusWire
import SwiftProtobuf
import Testing
import ZeroMQ

/// `maxPublicationBytes` bounds the whole encoded message (PROTOCOL.md section 11, "What
/// `maxPublicationBytes` counts"): measured here frame by frame, as a raw client receives
/// them, from a host and from a relay with a small bound.
@Suite("maxPublicationBytes bounds every publication and snapshot part, whole")
struct PublicationSizeTests {
    static let limit = 4_096
    /// Long names and values, so that a message fills up within a few properties or batches
    /// and a version-1 batch (properties by name) is much larger than in a run.
    static let wide = ObjectDefinition(
        "Wide",
        properties: (0..<40).map { PropertyDefinition("a-rather-long-property-name-\($0)", default: String(repeating: "w", count: 300)) })

    @Test("snapshot parts of a host and of a relay, runs and version-1 publications of a host, a relay's version-1 publications")
    func everyMessageWithinTheBound() async throws {
        let folder = Fixtures.temporaryFolder()
        var configuration = HostConfiguration(name: "sizes", controlEndpoint: "ipc://\(folder)/host", heartbeatInterval: .milliseconds(100))
        configuration.limits.maxPublicationBytes = Self.limit
        let host = try await StateHost(objects: [Self.wide], configuration: configuration)
        defer { host.stop() }
        var relayConfiguration = RelayConfiguration(upstream: host.controlEndpoint, name: "relay", controlEndpoint: "ipc://\(folder)/relay")
        relayConfiguration.limits.maxPublicationBytes = Self.limit
        // Patient: a slow machine (ThreadSanitizer) must not make the relay join again
        // mid-burst for 300 ms without a heartbeat.
        relayConfiguration.missedHeartbeatsBeforeStale = 600
        relayConfiguration.upstreamRequestTimeout = .seconds(10)
        let relay = try await StateRelay(configuration: relayConfiguration)
        defer { relay.stop() }
        try await relay.waitUntilSynced(timeout: .seconds(20))
        let context = try Context()

        for endpoint in [host.controlEndpoint, relay.controlEndpoint] {
            let sizes = try Self.snapshotPartSizes(context: context, endpoint: endpoint)
            #expect(sizes.count > 2, "\(endpoint): the object should need several parts, got \(sizes)")
            #expect(sizes.allSatisfy { $0 <= Self.limit }, "\(endpoint): parts of \(sizes) bytes")
        }

        let hostRuns = try Subscriber(context: context, endpoint: host.updatesEndpoint, topic: "u2/Wide", id: "runs")
        let hostBatches = try Subscriber(context: context, endpoint: host.updatesEndpoint, topic: "u/Wide", id: "batches")
        let relayBatches = try Subscriber(context: context, endpoint: relay.updatesEndpoint, topic: "u/Wide", id: "relayed")
        // The relay writes version-1 batches once a view has subscribed (its own join marker
        // says it has seen the subscription); and its copy must be live to relay.
        try await relay.waitUntilSynced(timeout: .seconds(20))

        // The host's own changes in a burst: it packs them into few, full messages. Made while
        // its loop holds still, so they wait together however slowly this thread runs.
        let changes = 600
        let resume = await host.pauseLoopForTesting()
        for index in 0..<changes {
            try host.update(
                "a-rather-long-property-name-\(index % 40)", to: .string("change \(index) " + String(repeating: "c", count: 120)), in: "Wide")
        }
        resume()
        let last = UInt64(changes)
        for (name, subscriber) in [("host runs", hostRuns), ("host version 1", hostBatches), ("relay version 1", relayBatches)] {
            let sizes = try subscriber.sizes(untilSequence: last)
            #expect(
                sizes.allSatisfy { $0 <= Self.limit },
                "\(name): \(sizes.filter { $0 > Self.limit }.count) of \(sizes.count) past \(Self.limit) bytes: \(sizes.max() ?? 0)")
            // Packed, not one batch per message: the bound is what splits them.
            #expect(sizes.count < changes / 4, "\(name): \(sizes.count) messages for \(changes) batches")
            #expect((sizes.max() ?? 0) > Self.limit / 2, "\(name): the largest message has \(sizes.max() ?? 0) bytes")
        }
    }

    /// The sizes of the replies to a version-2 snapshot request, in order, up to the last.
    static func snapshotPartSizes(context: Context, endpoint: String) throws -> [Int] {
        let client = try RawClient(context: context, endpoint: endpoint)
        defer { client.socket.close() }
        var snapshot = Statebus_V1_SnapshotRequest()
        snapshot.object = "Wide"
        try client.send(RawClient.request(version: StateBusProtocol.version2, id: 5, .snapshot(snapshot)))
        var sizes: [Int] = []
        let poller = Poller()
        poller.add(client.socket, events: .readable)
        while true {
            guard try !poller.poll(timeout: .seconds(20)).isEmpty, let message = try client.socket.tryReceive() else {
                throw StateBusError(.badRequest, "\(endpoint) sent no last part; got \(sizes.count) parts")
            }
            let reply = try Statebus_V1_Reply(serializedBytes: message.bytes)
            guard case .snapshotPart(let part) = reply.body else { throw StateBusError(.badRequest, "\(endpoint) answered \(reply)") }
            sizes.append(message.bytes.count)
            if part.last { return sizes }
        }
    }

    /// A SUB socket on one object's topic of an updates socket, live once its join marker
    /// came.
    struct Subscriber {
        let socket: Socket

        init(context: Context, endpoint: String, topic: String, id: String) throws {
            socket = try Socket(context: context, type: .sub)
            try socket.subscribe(Array(topic.utf8) + [0])
            try socket.subscribe(Array("j/\(id)".utf8) + [0])
            try socket.connect(endpoint)
            let poller = Poller()
            poller.add(socket, events: .readable)
            let deadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < deadline {
                guard try !poller.poll(timeout: .milliseconds(100)).isEmpty, let frames = try socket.tryReceiveMultipart() else { continue }
                if frames.first?.bytes == Array("j/\(id)".utf8) + [0] { return }
            }
            throw StateBusError(.notJoined, "no join marker for \(id) from \(endpoint)")
        }

        /// The size of each publication's message frame (the topic's not counted) until one
        /// carries `sequence`.
        func sizes(untilSequence sequence: UInt64) throws -> [Int] {
            defer { socket.close() }
            var sizes: [Int] = []
            let poller = Poller()
            poller.add(socket, events: .readable)
            let deadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < deadline {
                guard try !poller.poll(timeout: .milliseconds(100)).isEmpty, let frames = try socket.tryReceiveMultipart(), frames.count == 2 else {
                    continue
                }
                let body = frames[1].bytes
                let publication = try Statebus_V1_Publication(serializedBytes: body)
                let reached =
                    publication.hasRun
                    ? publication.run.firstSequence + UInt64(publication.run.batches) - 1 : publication.updates.last?.sequence ?? 0
                guard publication.hasRun || !publication.updates.isEmpty else { continue }
                sizes.append(body.count)
                if reached >= sequence { return sizes }
            }
            throw StateBusError(.notJoined, "publications up to sequence \(sequence) did not come; got \(sizes.count)")
        }
    }
}
