import Testing
import ZeroMQ

@Suite("Socket patterns round-trip over every transport")
struct PatternTests {
    let context: Context

    init() throws { context = try Context() }

    @Test("PUSH to PULL", arguments: Transport.allCases)
    func pushPull(transport: Transport) throws {
        let pull = try Socket(context: context, type: .pull)
        let push = try Socket(context: context, type: .push)
        try push.connect(try pull.bind(transport.bindEndpoint()))
        try push.send("hello")
        #expect(try receive(pull) == [Array("hello".utf8)])
    }

    @Test("PAIR both ways", arguments: Transport.allCases)
    func pair(transport: Transport) throws {
        let a = try Socket(context: context, type: .pair)
        let b = try Socket(context: context, type: .pair)
        try b.connect(try a.bind(transport.bindEndpoint()))
        try a.send("ping")
        #expect(try receive(b) == [Array("ping".utf8)])
        try b.send("pong")
        #expect(try receive(a) == [Array("pong".utf8)])
    }

    @Test("DEALER to ROUTER and back, routed by identity", arguments: Transport.allCases)
    func dealerRouter(transport: Transport) throws {
        let router = try Socket(context: context, type: .router)
        let dealer = try Socket(context: context, type: .dealer)
        try dealer.set(.routingID, Array("view-1".utf8))
        try dealer.connect(try router.bind(transport.bindEndpoint()))
        try dealer.send(multipart: [Array("write".utf8), [1, 2, 3]])
        let request = try #require(try receive(router))
        #expect(request == [Array("view-1".utf8), Array("write".utf8), [1, 2, 3]])
        try router.send(multipart: [request[0], Array("ack".utf8)])
        #expect(try receive(dealer) == [Array("ack".utf8)])
    }

    @Test("PUB to SUB with a topic filter", arguments: Transport.allCases)
    func pubSub(transport: Transport) throws {
        let publisher = try Socket(context: context, type: .pub)
        let subscriber = try Socket(context: context, type: .sub)
        try subscriber.subscribe("probe")
        try subscriber.subscribe("news")
        try subscriber.connect(try publisher.bind(transport.bindEndpoint()))
        #expect(try awaitSubscription(publisher: publisher, subscriber: subscriber))
        try publisher.send(multipart: [Array("sport".utf8), [0]])
        try publisher.send(multipart: [Array("news".utf8), [1]])
        // The filtered "sport" message never arrives; "news" is the first thing received.
        #expect(try receive(subscriber) == [Array("news".utf8), [1]])
    }

    @Test("XPUB sees subscriptions from XSUB and delivers to it", arguments: Transport.allCases)
    func xpubXsub(transport: Transport) throws {
        let xpub = try Socket(context: context, type: .xpub)
        let xsub = try Socket(context: context, type: .xsub)
        try xsub.connect(try xpub.bind(transport.bindEndpoint()))
        try xsub.send([1] + Array("t".utf8))  // subscribe to "t"
        // Explicit readiness: the subscription message itself.
        #expect(try receive(xpub) == [[1] + Array("t".utf8)])
        try xpub.send("topic")
        #expect(try receive(xsub) == [Array("topic".utf8)])
    }

    @Test("multipart frames keep their boundaries, including empty frames", arguments: Transport.allCases)
    func multipartBoundaries(transport: Transport) throws {
        let pull = try Socket(context: context, type: .pull)
        let push = try Socket(context: context, type: .push)
        try push.connect(try pull.bind(transport.bindEndpoint()))
        let frames: [[UInt8]] = [[], Array("ab".utf8), [], Array(repeating: 7, count: 5000), [0]]
        try push.send(multipart: frames)
        try push.send("next")
        #expect(try receive(pull) == frames)
        #expect(try receive(pull) == [Array("next".utf8)])
    }

    @Test("non-blocking receive on an empty socket reports would-block")
    func wouldBlock() throws {
        let pull = try Socket(context: context, type: .pull)
        try pull.bind(Transport.inproc.bindEndpoint())
        #expect(try pull.tryReceive() == nil)
        #expect(try pull.tryReceiveMultipart() == nil)
        let message = Message()
        #expect(try pull.receive(into: message, wait: false) == false)
        // A blocking receive with a timeout reports the would-block as an error with EAGAIN.
        try pull.set(.receiveTimeout, 10)
        #expect(throws: ZeroMQError.again) { try pull.receive() }
    }

    @Test("non-blocking send to no peer reports would-block")
    func sendWouldBlock() throws {
        let dealer = try Socket(context: context, type: .dealer)
        try dealer.set(.immediate, true)  // queue only to completed connections
        try dealer.connect(Transport.ipc.bindEndpoint())  // nothing listens there
        #expect(try dealer.send("x", wait: false) == false)
    }

    @Test("a received Message is read in place and can be reused")
    func messageReuse() throws {
        let pull = try Socket(context: context, type: .pull)
        let push = try Socket(context: context, type: .push)
        try push.connect(try pull.bind(Transport.inproc.bindEndpoint()))
        try push.send(Message("one"))
        try push.send(Message([2, 3]))
        let message = Message()
        try pull.receive(into: message)
        #expect(message.string == "one")
        #expect(message.count == 3)
        try pull.receive(into: message)
        #expect(message.withUnsafeBytes { Array($0) } == [2, 3])
        #expect(!message.hasMore)
    }
}
