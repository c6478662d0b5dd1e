import Foundation
import StateBus
import StateBusWire
import SwiftProtobuf
import Testing
import ZeroMQ

/// A raw client on the host's control socket, to send what a broken or hostile peer would.
struct RawClient {
    let socket: Socket

    init(context: Context, endpoint: String) throws {
        self.init(socket: try Socket(context: context, type: .dealer))
        try socket.connect(endpoint)
    }

    /// A client on a DEALER socket set up by the caller (options that must precede `connect`).
    init(socket: Socket) { self.socket = socket }

    func send(frames: [[UInt8]]) throws { try socket.send(multipart: frames) }

    func send(_ request: Statebus_V1_Request) throws {
        try socket.send(try request.serializedBytes() as [UInt8])
    }

    /// Says hello as `viewID` and waits for the welcome: a write naming a view id is applied
    /// only from the connection its hello bound. - Returns: the welcome.
    /// - Parameter confirmsByEcho: ask for no answer to accepted writes (`Hello.confirms_by_echo`).
    @discardableResult
    func hello(as viewID: String = "raw", confirmsByEcho: Bool = false) throws -> Statebus_V1_Welcome {
        var hello = Statebus_V1_Hello()
        hello.viewID = viewID
        hello.confirmsByEcho = confirmsByEcho
        try send(Self.request(id: 1, .hello(hello)))
        guard let reply = try reply(), case .welcome(let welcome) = reply.body else {
            throw StateBusError(.notJoined, "no welcome to the hello of view \(viewID)")
        }
        return welcome
    }

    func reply() throws -> Statebus_V1_Reply? {
        let poller = Poller()
        poller.add(socket, events: .readable)
        guard try !poller.poll(timeout: .seconds(20)).isEmpty, let message = try socket.tryReceive() else { return nil }
        return try Statebus_V1_Reply(serializedBytes: message.bytes)
    }

    static func request(version: UInt32 = StateBusProtocol.version, id: UInt64 = 7, _ body: Statebus_V1_Request.OneOf_Body) -> Statebus_V1_Request {
        var request = Statebus_V1_Request()
        request.protocolVersion = version
        request.requestID = id
        request.body = body
        return request
    }

    static func write(object: String, property: String, value: Value, writeID: UInt64 = 1) -> Statebus_V1_Request.OneOf_Body {
        var write = Statebus_V1_WriteRequest()
        write.object = object
        write.writeID = writeID
        write.viewID = "raw"
        var change = Statebus_V1_Change()
        change.property = property
        change.value = value.wire
        write.changes = [change]
        return .write(write)
    }
}

@Suite("Bad input never crashes the host or changes its state")
struct BadInputTests {
    @Test("every kind of bad input is answered or dropped, counted, and changes nothing")
    func badInput() async throws {
        let host = try await StateHost(
            objects: [Fixtures.sharedData],
            configuration: HostConfiguration(
                name: "bad", controlEndpoint: "ipc://\(Fixtures.temporaryFolder())/control", maxMessageBytes: 1024
            ))
        defer { host.stop() }
        let before = host.values(of: "SharedData")
        let sequenceBefore = host.sequence(of: "SharedData")
        let client = try RawClient(context: try Context(), endpoint: host.controlEndpoint)
        try client.hello()

        // Random bytes.
        try client.send(frames: [(0..<200).map { _ in UInt8.random(in: 0...255) } + [0xFF, 0xFF]])
        #expect(try client.reply()?.error.code == .badRequest)

        // A valid request cut short.
        let full: [UInt8] = try RawClient.request(RawClient.write(object: "SharedData", property: "sharedText", value: "x")).serializedBytes()
        try client.send(frames: [Array(full.prefix(full.count / 2))])
        #expect(try client.reply()?.error.code == .badRequest)

        // Two frames where one is expected.
        try client.send(frames: [[1], [2]])
        #expect(try client.reply()?.error.code == .badRequest)

        // A protocol version from the future.
        try client.send(RawClient.request(version: 99, .ping(Statebus_V1_Ping())))
        let versionReply = try #require(try client.reply())
        #expect(versionReply.error.code == .unsupportedVersion)
        #expect(versionReply.requestID == 7)
        #expect(versionReply.error.message.contains("versions 1 and 2"))

        // Unknown object, wrong type.
        try client.send(RawClient.request(RawClient.write(object: "Nope", property: "sharedText", value: "x")))
        #expect(try client.reply()?.writeReply.rejection.code == .unknownObject)
        try client.send(RawClient.request(RawClient.write(object: "SharedData", property: "counter", value: "ten")))
        let typeReply = try #require(try client.reply())
        #expect(typeReply.writeReply.accepted == false)
        #expect(typeReply.writeReply.rejection.code == .typeMismatch)
        #expect(typeReply.writeReply.rejection.message.contains("Int"))

        // Oversized.
        try client.send(
            RawClient.request(RawClient.write(object: "SharedData", property: "sharedText", value: .string(String(repeating: "x", count: 5000)))))
        #expect(try client.reply()?.error.code == .tooLarge)

        // The host is still there and nothing changed.
        try client.send(RawClient.request(.ping(Statebus_V1_Ping())))
        #expect(try client.reply()?.pong.epoch == host.epoch)
        #expect(host.values(of: "SharedData") == before)
        #expect(host.sequence(of: "SharedData") == sequenceBefore)
        #expect(host.statistics.badMessages >= 5)
        #expect(host.statistics.writesRejected == 2)
        #expect(host.statistics.writesAccepted == 0)
    }

    @Test("what PROTOCOL.md says of bad input: an empty frame, a value of an unknown kind, a string that is not UTF-8")
    func protocolPrecision() async throws {
        let host = try await StateHost(
            objects: [Fixtures.sharedData],
            configuration: HostConfiguration(name: "precise", controlEndpoint: "ipc://\(Fixtures.temporaryFolder())/control"))
        defer { host.stop() }
        let before = host.values(of: "SharedData")
        let client = try RawClient(context: try Context(), endpoint: host.controlEndpoint)
        try client.hello()

        // An empty frame decodes as a request with no version (checks: size, decoding, version, body).
        try client.send(frames: [[]])
        let empty = try #require(try client.reply())
        #expect(empty.error.code == .unsupportedVersion)
        #expect(empty.requestID == 0)

        // A value that carries only a field this host does not know (a future kind) is refused,
        // naming the property, never stored as null.
        let future = try Statebus_V1_Value(serializedBytes: [0xA0, 0x06, 0x01])  // only field 100: varint 1
        var body = RawClient.write(object: "SharedData", property: "sharedText", value: "x")
        if case .write(var write) = body {
            write.changes[0].value = future
            body = .write(write)
        }
        try client.send(RawClient.request(body))
        let refused = try #require(try client.reply())
        #expect(refused.writeReply.accepted == false)
        #expect(refused.writeReply.rejection.code == .badRequest)
        #expect(refused.writeReply.rejection.property == "sharedText", "\(refused.writeReply.rejection)")
        #expect(refused.writeReply.sequence == 0, "a refusal carries no sequence")

        // A string that is not UTF-8 makes the request undecodable: BAD_REQUEST, request id 0.
        var bytes: [UInt8] = try RawClient.request(RawClient.write(object: "SharedData", property: "sharedText", value: "xyz")).serializedBytes()
        let text = Array("xyz".utf8)
        if let start = (0...(bytes.count - text.count)).first(where: { Array(bytes[$0..<($0 + text.count)]) == text }) {
            bytes[start] = 0xFF
        }
        try client.send(frames: [bytes])
        let notText = try #require(try client.reply())
        #expect(notText.error.code == .badRequest)
        #expect(notText.requestID == 0)
        #expect(host.values(of: "SharedData") == before)
    }
}
