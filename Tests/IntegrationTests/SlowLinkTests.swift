import Foundation
import StateBus
import Testing

/// A view on a slow link: its snapshot takes longer to arrive than one request timeout.
@Suite("A slow link")
struct SlowLinkTests {
    /// 200 properties of 8 KB (1.6 MB) in parts of at most 16 KB, through a link paced to
    /// 400 KB/s: about 4 s of snapshot, against a request timeout of 2 s. A part arrives
    /// every 40 ms or so, so the snapshot is coming all along; asking again after one request
    /// timeout would start it over every time, and the view would never join.
    @Test("a snapshot slower than the request timeout, arriving part by part, completes instead of starting over")
    func slowSnapshotCompletes() async throws {
        let (host, value) = try await Self.bigHost()
        defer { host.stop() }
        let link = try RecordingRelay(to: host.controlEndpoint, downstreamBytesPerSecond: 400_000)
        defer { link.close() }
        let requestTimeout = Duration.seconds(2)
        let replica = try Replica(
            object: "Big", controlEndpoint: link.endpoint, configuration: ReplicaConfiguration(nodeName: "slow", requestTimeout: requestTimeout))
        defer { replica.close() }
        let started = ContinuousClock.now
        try await replica.waitUntilLive(timeout: .seconds(60))
        let joined = ContinuousClock.now - started
        // The link is slow enough to matter: the snapshot took longer than a request timeout.
        #expect(joined > requestTimeout, "the join took \(joined), so the link did not slow the snapshot past the request timeout")
        #expect(replica["p0"] == .string(value))
        #expect(replica["p199"] == .string(value))
        #expect(replica.statistics.appliedSnapshots == 1)
    }

    /// The same for a relay whose upstream is at the far end of the slow link.
    @Test("a relay's snapshot slower than its upstream request timeout completes instead of starting over")
    func slowRelaySnapshotCompletes() async throws {
        let (host, value) = try await Self.bigHost()
        defer { host.stop() }
        let link = try RecordingRelay(to: host.controlEndpoint, downstreamBytesPerSecond: 400_000)
        defer { link.close() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("slow-link-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var configuration = RelayConfiguration(upstream: link.endpoint, name: "far", controlEndpoint: "ipc://\(folder)/far", objects: ["Big"])
        configuration.upstreamRequestTimeout = .seconds(2)
        let started = ContinuousClock.now
        let relay = try await StateRelay(configuration: configuration)
        defer { relay.stop() }
        try await relay.waitUntilSynced(timeout: .seconds(60))
        let synced = ContinuousClock.now - started
        #expect(synced > configuration.upstreamRequestTimeout, "the relay synced in \(synced), so the link did not slow its snapshot enough")
        let view = try Replica(object: "Big", controlEndpoint: relay.controlEndpoint)
        defer { view.close() }
        try await view.waitUntilLive(timeout: .seconds(30))
        #expect(view["p199"] == .string(value))
    }

    /// A host of one object of 200 properties of 8 KB each, published and snapshotted in
    /// parts of at most 16 KB, on tcp (the slow link is a TCP relay).
    private static func bigHost() async throws -> (StateHost, String) {
        let value = String(repeating: "x", count: 8_000)
        let properties = (0..<200).map { PropertyDefinition("p\($0)", kind: .string, default: .string(value)) }
        var configuration = HostConfiguration(name: "slow-link", controlEndpoint: "tcp://127.0.0.1:*", persistence: .disabled)
        configuration.allowsInsecureNetwork = true
        configuration.limits.maxPublicationBytes = 16 << 10
        return (try await StateHost(objects: [ObjectDefinition("Big", properties: properties)], configuration: configuration), value)
    }
}
