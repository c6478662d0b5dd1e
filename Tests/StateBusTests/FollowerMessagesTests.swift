import Foundation
import StateBusWire
import Testing

@testable import StateBus

/// The domain forms a follower of a host (a view, a relay) and a server (a host, a relay)
/// exchange besides runs: `FollowerRequest` and `ViewRequest`, `HostReply` and
/// `FollowerReply`, `HostSignal`, checked against the generated messages they stand for and
/// against each other: what one side writes, the other reads back the same.
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
        let encodedFirst = line.encode(.ping)
        let encodedSecond = line.encode(.ping)
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

    @Test("every request a follower writes, a server reads back the same")
    func requestsRoundTrip() throws {
        let hello = FollowerRequest.Hello(
            viewID: "v1", nodeName: "node", objects: ["Counter"], sessionToken: Data([3]), schemaHash: 7, confirmsByEcho: true, relay: false)
        guard case .hello(let read) = try Self.read(.hello(hello)) else { throw Failure("a hello read as something else") }
        #expect(read.viewID == "v1" && read.nodeName == "node" && read.objects == ["Counter"] && read.sessionToken == Data([3]))
        #expect(read.schemaHash == 7 && read.confirmsByEcho && !read.relay)
        var relayHello = hello
        relayHello.relay = true
        guard case .hello(let relayRead) = try Self.read(.hello(relayHello)), relayRead.relay else {
            throw Failure("a relay's hello lost its relay flag: the host would not check the relay role")
        }
        guard case .snapshot(let object) = try Self.read(.snapshot(object: "Counter")), object == "Counter" else {
            throw Failure("a snapshot request read as something else")
        }
        guard case .goodbye(let viewID) = try Self.read(.goodbye(viewID: "v1")), viewID == "v1" else {
            throw Failure("a goodbye read as something else")
        }
        guard case .ping = try Self.read(.ping), case .views = try Self.read(.views) else { throw Failure("a ping or views request misread") }
        let call = FollowerRequest.Call(object: "Todo", action: "add", arguments: [.string("milk"), .int(2)], viewID: "v1", callID: 12)
        guard case .call(let calledRead) = try Self.read(.call(call)) else { throw Failure("a call read as something else") }
        #expect(calledRead.object == "Todo" && calledRead.action == "add" && calledRead.viewID == "v1" && calledRead.callID == 12)
        #expect(calledRead.arguments == [.string("milk"), .int(2)] && calledRead.argumentCount == 2 && !calledRead.carriesUnknownFields)
        #expect(ViewRequest.call(calledRead).refusalAnswer == .call(callID: 12) && ViewRequest.call(calledRead).writes)
        // A relay passes a call on as it came: the upstream reads the same call.
        guard case .call(let forwarded) = try Self.read(.forwardedCall(calledRead)) else { throw Failure("a forwarded call misread") }
        #expect(forwarded.arguments == calledRead.arguments && forwarded.callID == 12)
        #expect(!ViewRequest.ping.needsLeader && ViewRequest.views.needsLeader && ViewRequest.empty.refusalAnswer == .error)
    }

    @Test("every reply a server writes, a follower reads back the same")
    func repliesRoundTrip() throws {
        let refusal = StateBusError(.notLeader, "a standby", object: "Counter", property: "value")
        guard case .error(let error, let leader) = try Self.read(.error(refusal, leader: "tcp://leader:1"), requestID: 5).body else {
            throw Failure("an error read as something else")
        }
        #expect(error.code == .notLeader && error.message == "a standby" && error.object == "Counter" && error.property == "value")
        #expect(leader == "tcp://leader:1")
        let reply = try Self.read(.call(callID: 4, outcome: .success((result: .string("done"), sequence: 31))), requestID: 6)
        guard case .call(let callID, .success(let outcome)) = reply.body else { throw Failure("a call's answer misread") }
        #expect(reply.requestID == 6 && reply.protocolVersion == StateBusProtocol.version2)
        #expect(callID == 4 && outcome.result == .string("done") && outcome.sequence == 31)
        guard case .call(_, .failure(let failed)) = try Self.read(.call(callID: 4, outcome: .failure(refusal)), requestID: 7).body else {
            throw Failure("a call's failure misread")
        }
        #expect(failed.code == .notLeader)
        let views = ConnectedView.ViewList(
            views: [ConnectedView(viewID: "v1", nodeName: "panel", isRelay: false, connectedFor: .seconds(2), silentFor: .zero, keyName: "")],
            omitted: 3)
        guard case .views(let list) = try Self.read(.views(views), requestID: 8).body else { throw Failure("a views list misread") }
        #expect(list.views.map(\.viewID) == ["v1"] && list.views.first?.connectedFor == .seconds(2) && list.omitted == 3)
        guard case .other = try Self.read(.pong(epoch: 3), requestID: 9).body else { throw Failure("a pong read as something to act on") }
    }

    @Test("a host's heartbeat and join marker publications read back as the signals they encode")
    func signalsRoundTrip() throws {
        let heartbeat = try HostSignal.heartbeatPublication(epoch: 9, sequences: [(object: "A", sequence: 3), (object: "B", sequence: 0)])
        #expect(heartbeat.withUnsafeBytes { HostSignal(publication: $0) } == .heartbeat(epoch: 9, sequences: ["A": 3, "B": 0]))
        let marker = try HostSignal.joinMarkerPublication(viewID: "v1", epoch: 9)
        #expect(marker.withUnsafeBytes { HostSignal(publication: $0) } == .joinMarker(viewID: "v1", epoch: 9))
    }

    @Test("a view's write reads back as written, a relay forwards it unchanged, and unknown fields are found, not dropped")
    func writes() throws {
        let written = WireWrite(
            protocolVersion: StateBusProtocol.version2, requestID: 4, object: "Profile", writeID: 9, viewID: "v1",
            changes: [PropertyChange("name", to: .string("Ada")), PropertyChange("age", to: .int(36))])
        let decoded = try WriteCodec.request(written).withUnsafeBytes(DecodedRequest.init(bytes:))
        guard case .write(let write) = decoded.request else { throw Failure("a write read as something else") }
        #expect(write.object == "Profile" && write.viewID == "v1" && write.writeID == 9 && write.changes == written.changes)
        #expect(write.propertyWithUnknownFields == nil && ViewRequest.write(write).refusalAnswer == .write(writeID: 9))
        guard case .write(let forwarded) = try Self.read(.forwardedWrite(write)) else { throw Failure("a forwarded write misread") }
        #expect(forwarded.changes == written.changes && forwarded.writeID == 9 && forwarded.viewID == "v1")

        // Field 99, a varint: what a client built for a newer schema might send.
        let unknownField: [UInt8] = [0x98, 0x06, 0x01]
        var change = Statebus_V1_Change()
        change.property = "age"
        change.value.intValue = 1
        let changeBytes: [UInt8] = try change.serializedBytes() + unknownField
        var wire = Statebus_V1_WriteRequest()
        wire.object = "Profile"
        wire.changes = [try Statebus_V1_Change(serializedBytes: changeBytes)]
        var request = Statebus_V1_Request()
        request.write = wire
        guard case .write(let inChange) = ViewRequest(wire: request) else { throw Failure("a write read as something else") }
        #expect(inChange.propertyWithUnknownFields == "age", "unknown fields in a change name its property")
        wire.changes = []
        request.write = try Statebus_V1_WriteRequest(serializedBytes: try wire.serializedBytes() + unknownField)
        guard case .write(let inWrite) = ViewRequest(wire: request) else { throw Failure("a write read as something else") }
        #expect(inWrite.propertyWithUnknownFields == "", "unknown fields of the write itself are found too")
        var call = Statebus_V1_CallRequest()
        call.object = "Todo"
        request.call = try Statebus_V1_CallRequest(serializedBytes: try call.serializedBytes() + unknownField)
        guard case .call(let unknownCall) = ViewRequest(wire: request), unknownCall.carriesUnknownFields else {
            throw Failure("a call with unknown fields was not found out")
        }
    }

    @Test("write answers and errors read back; a relay passes an answer on as it came, unknown fields included")
    func answers() throws {
        let accepted = WriteCodec.reply(protocolVersion: StateBusProtocol.version2, requestID: 3, writeID: 9, outcome: .accepted(sequence: 41))
        guard case .write(9, .success(41)) = try FollowerReply(bytes: accepted).body else { throw Failure("an accepted write misread") }
        let refused = WriteCodec.reply(
            protocolVersion: StateBusProtocol.version2, requestID: 3, writeID: 9,
            outcome: WriteCodec.Outcome(.failure(StateBusError(.readOnly, "no", object: "Profile", property: "id"))))
        guard case .write(9, .failure(let error)) = try FollowerReply(bytes: refused).body else { throw Failure("a refused write misread") }
        #expect(error.code == .readOnly && error.object == "Profile" && error.property == "id")
        guard case .error(_, let leader) = try Self.read(.error(StateBusError(.badRequest, "bad")), requestID: 1).body, leader.isEmpty else {
            throw Failure("an error without a leader misread")
        }

        var callReply = Statebus_V1_Reply()
        callReply.requestID = 5
        callReply.callReply.callID = 8
        callReply.callReply.ok = true
        let withUnknown: [UInt8] = try callReply.serializedBytes() + [0x98, 0x06, 0x01]
        let passed = try FollowerReply(bytes: withUnknown).passedOn(version: StateBusProtocol.version1, requestID: 77)
        let read = try Statebus_V1_Reply(serializedBytes: passed)
        #expect(read.requestID == 77 && read.protocolVersion == StateBusProtocol.version1 && read.callReply.callID == 8)
        #expect(!read.unknownFields.data.isEmpty, "the relay dropped a field it does not know")
    }

    @Test("a version-1 snapshot chunk carries its object, place and properties")
    func snapshotChunk() throws {
        let chunk = HostReply.SnapshotChunk(
            object: "Profile", epoch: 2, sequence: 30, index: 1, last: true, properties: [("name", .string("Ada"), 12), ("age", .int(36), 30)])
        let read = try Statebus_V1_Reply(serializedBytes: try HostReply.snapshotChunk(chunk).encoded(version: 1, requestID: 6)).snapshotChunk
        #expect(read.object == "Profile" && read.epoch == 2 && read.sequence == 30 && read.chunkIndex == 1 && read.last)
        #expect(read.properties.map(\.name) == ["name", "age"] && read.properties.map(\.version) == [12, 30])
        #expect(read.properties.map { Value(wire: $0.value) } == [.string("Ada"), .int(36)])
    }

    private struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// A request as a follower encodes it, read as a server reads it.
    private static func read(_ request: FollowerRequest) throws -> ViewRequest {
        let bytes = try request.encoded(version: StateBusProtocol.version2, requestID: 3)
        let decoded = try bytes.withUnsafeBytes(DecodedRequest.init(bytes:))
        #expect(decoded.requestID == 3 && decoded.protocolVersion == StateBusProtocol.version2)
        return decoded.request
    }

    /// A reply as a server encodes it, read as a follower reads it.
    private static func read(_ reply: HostReply, requestID: UInt64) throws -> FollowerReply {
        try FollowerReply(bytes: try reply.encoded(version: StateBusProtocol.version2, requestID: requestID))
    }

    private static func signal(_ publication: Statebus_V1_Publication) throws -> HostSignal? {
        let bytes: [UInt8] = try publication.serializedBytes()
        return bytes.withUnsafeBytes { HostSignal(publication: $0) }
    }
}
