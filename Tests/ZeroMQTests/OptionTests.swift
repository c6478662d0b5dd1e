import Testing
import ZeroMQ

@Suite("Socket options from the typed table")
struct OptionTests {
    let context: Context
    init() throws { context = try Context() }

    @Test("options round-trip")
    func roundTrip() throws {
        let socket = try Socket(context: context, type: .router)
        try socket.set(.linger, 250)
        #expect(try socket.get(.linger) == 250)
        try socket.set(.sendHighWaterMark, 5000)
        #expect(try socket.get(.sendHighWaterMark) == 5000)
        try socket.set(.receiveHighWaterMark, 7000)
        #expect(try socket.get(.receiveHighWaterMark) == 7000)
        try socket.set(.maxMessageSize, 1 << 20)
        #expect(try socket.get(.maxMessageSize) == 1 << 20)
        try socket.set(.heartbeatInterval, 1000)
        #expect(try socket.get(.heartbeatInterval) == 1000)
        try socket.set(.heartbeatTimeout, 3000)
        #expect(try socket.get(.heartbeatTimeout) == 3000)
        try socket.set(.heartbeatTTL, 4000)
        #expect(try socket.get(.heartbeatTTL) == 4000)
        try socket.set(.reconnectInterval, 50)
        #expect(try socket.get(.reconnectInterval) == 50)
        try socket.set(.reconnectIntervalMax, 2000)
        #expect(try socket.get(.reconnectIntervalMax) == 2000)
        try socket.set(.immediate, true)
        #expect(try socket.get(.immediate) == true)
        try socket.set(.routingID, Array("host".utf8))
        #expect(try socket.get(.routingID) == Array("host".utf8))
        #expect(try socket.get(.type) == 6)  // ZMQ_ROUTER
        #expect(try socket.get(.receiveMore) == false)
        let endpoint = try socket.bind("tcp://127.0.0.1:*")
        #expect(try socket.get(.lastEndpoint) == endpoint)
        #expect(endpoint.hasPrefix("tcp://127.0.0.1:") && !endpoint.hasSuffix(":*"))
    }

    @Test("write-only and socket-specific options are accepted")
    func writeOnly() throws {
        let router = try Socket(context: context, type: .router)
        try router.set(.routerMandatory, true)
        try router.set(.routerHandover, true)
        let xpub = try Socket(context: context, type: .xpub)
        try xpub.set(.xpubVerbose, true)
        try xpub.set(.xpubNoDrop, true)
        #expect(try xpub.events().contains(.writable))
    }

    @Test("an invalid option value gives EINVAL with the option's name")
    func invalidValue() throws {
        let socket = try Socket(context: context, type: .pub)
        let error = try #require(throws: ZeroMQError.self) { try socket.set(.routingID, []) }
        #expect(error == .invalidArgument)
        #expect(error.description.contains("routingID"))
    }

    @Test("a message larger than the receiver's max message size is refused")
    func maxMessageSize() throws {
        let pull = try Socket(context: context, type: .pull)
        try pull.set(.maxMessageSize, 100)
        let push = try Socket(context: context, type: .push)
        // tcp: the limit is enforced by the wire protocol (inproc does not check it).
        try push.connect(try pull.bind("tcp://127.0.0.1:*"))
        try push.send(Array(repeating: 1, count: 100))
        #expect(try receive(pull)?.first?.count == 100)  // at the limit: accepted
        try push.send(Array(repeating: 2, count: 101))  // over it: the peer is dropped
        #expect(try receive(pull, within: .milliseconds(500)) == nil)
    }
}
