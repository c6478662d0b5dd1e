import Foundation
import StateBus
import StateBusWire
import SwiftProtobuf
import Testing
import ZeroMQ

/// What a heartbeat announces for each object (PROTOCOL.md section 7): the sequence of the
/// last batch the host released for publication, also for an object nobody subscribes to,
/// whose batches go out in no form.
@Suite("Heartbeats announce each object's released sequence")
struct HeartbeatSequenceTests {
    @Test("an object nobody subscribes to: nothing is published for it, and heartbeats announce its current sequence")
    func unsubscribedObject() async throws {
        let host = try await Fixtures.host(heartbeat: .milliseconds(100))
        defer { host.stop() }
        let context = try Context()
        // Subscribed to the heartbeat and to SharedData's runs only: never to Profile.
        let sub = try Socket(context: context, type: .sub)
        defer { sub.close() }
        try sub.subscribe(Array("hb".utf8) + [0])
        try sub.subscribe(Array("u2/SharedData".utf8) + [0])
        try sub.connect(host.updatesEndpoint)

        for round in 1...3 { _ = try host.update("isLoading", to: .bool(round % 2 == 1), in: "Profile") }
        #expect(host.sequence(of: "Profile") == 3)
        _ = try host.update("counter", to: 1, in: "SharedData")

        let poller = Poller()
        poller.add(sub, events: .readable)
        let deadline = ContinuousClock.now + .seconds(20)
        var announced: [String: UInt64] = [:]
        while ContinuousClock.now < deadline, announced["Profile"] != 3 || announced["SharedData"] != 1 {
            guard try !poller.poll(timeout: .milliseconds(100)).isEmpty, let frames = try sub.tryReceiveMultipart(), frames.count == 2 else {
                continue
            }
            let publication = try Statebus_V1_Publication(serializedBytes: frames[1].bytes)
            for entry in publication.heartbeat.sequences { announced[entry.object] = entry.sequence }
        }
        #expect(announced == ["Profile": 3, "SharedData": 1], "the heartbeats announced \(announced)")
    }
}
