import Testing
import ZeroMQ

@Suite("XSUB to XPUB forwarder")
struct ForwarderTests {
    @Test("messages and subscriptions pass through the forwarder; stop is clean")
    func forwards() throws {
        let context = try Context()
        let forwarder = try Forwarder(
            context: context,
            publishersConnectTo: "tcp://127.0.0.1:*",
            subscribersConnectTo: "tcp://127.0.0.1:*"
        )
        let publisher = try Socket(context: context, type: .pub)
        try publisher.connect(forwarder.frontendEndpoint)
        let subscriber = try Socket(context: context, type: .sub)
        try subscriber.subscribe("")
        try subscriber.connect(forwarder.backendEndpoint)
        #expect(try awaitSubscription(publisher: publisher, subscriber: subscriber))
        try publisher.send(multipart: [Array("state".utf8), [42]])
        #expect(try receive(subscriber) == [Array("state".utf8), [42]])
        forwarder.stop()
        forwarder.stop()
    }

    @Test("a bind failure is reported and nothing keeps running")
    func bindFailure() throws {
        let context = try Context()
        #expect(throws: ZeroMQError.unsupportedTransport) {
            _ = try Forwarder(context: context, publishersConnectTo: "bogus://x", subscribersConnectTo: "inproc://y")
        }
        context.terminate()
    }
}
