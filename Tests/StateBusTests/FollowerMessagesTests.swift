import Foundation
import StateBusWire
import Testing

@testable import StateBus

/// The domain forms a follower of a host (a view, a relay) writes and reads besides runs:
/// `FollowerRequest` and `HostSignal`, checked against the generated messages they stand for.
@Suite("A follower's requests and a host's signals, to and from the wire")
struct FollowerMessagesTests {
    @Test("each request is the generated message a host reads")
    func requests() throws {
        let hello = FollowerRequest.Hello(
            viewID: "v1", nodeName: "node", objects: ["Counter"], sessionToken: Data([1, 2]), schemaHash: 42, confirmsByEcho: true,
            relay: true)
        let wire = FollowerRequest.hello(hello).wire
        #expect(wire.hello.viewID == "v1" && wire.hello.nodeName == "node" && wire.hello.objects == ["Counter"])
        #expect(wire.hello.sessionToken == Data([1, 2]) && wire.hello.schemaHash == 42 && wire.hello.confirmsByEcho && wire.hello.relay)
        #expect(FollowerRequest.snapshot(object: "Counter").wire.snapshot.object == "Counter")
        #expect(FollowerRequest.goodbye(viewID: "v1").wire.goodbye.viewID == "v1")
        if case .ping? = FollowerRequest.ping.wire.body {} else { Issue.record("a ping is not a ping: \(FollowerRequest.ping.wire)") }
        // Encoded by the follower's request line: version 2, the next id.
        var line = ControlRequests()
        let encodedFirst = line.encode(FollowerRequest.ping.wire)
        let encodedSecond = line.encode(FollowerRequest.ping.wire)
        let first = try #require(encodedFirst)
        let second = try #require(encodedSecond)
        let decoded = try Statebus_V1_Request(serializedBytes: second.bytes)
        #expect(first.id == 1 && second.id == 2 && decoded.requestID == 2 && decoded.protocolVersion == StateBusProtocol.version2)
    }

    @Test("a heartbeat and a join marker are read; a publication with neither is refused, not read as epoch 0")
    func signals() throws {
        var heartbeat = Statebus_V1_Publication()
        heartbeat.heartbeat.epoch = 9
        var sequence = Statebus_V1_ObjectSequence()
        sequence.object = "Counter"
        sequence.sequence = 17
        heartbeat.heartbeat.sequences = [sequence]
        #expect(try Self.signal(heartbeat) == .heartbeat(epoch: 9, sequences: ["Counter": 17]))

        var marker = Statebus_V1_Publication()
        marker.joinMarker.viewID = "v1"
        marker.joinMarker.epoch = 9
        #expect(try Self.signal(marker) == .joinMarker(viewID: "v1", epoch: 9))

        var neither = Statebus_V1_Publication()
        neither.protocolVersion = 2
        #expect(try Self.signal(neither) == nil)
        #expect([UInt8]([0xFF, 0xFF]).withUnsafeBytes { HostSignal(publication: $0) } == nil, "bytes that are no publication")
    }

    private static func signal(_ publication: Statebus_V1_Publication) throws -> HostSignal? {
        let bytes: [UInt8] = try publication.serializedBytes()
        return bytes.withUnsafeBytes { HostSignal(publication: $0) }
    }
}
