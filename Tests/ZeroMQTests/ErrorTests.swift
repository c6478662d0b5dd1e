import Testing
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Errors keep errno and say what failed")
struct ErrorTests {
    let context: Context
    init() throws { context = try Context() }

    @Test("binding an endpoint already in use")
    func addressInUse() throws {
        let first = try Socket(context: context, type: .pull)
        let endpoint = try first.bind("tcp://127.0.0.1:*")
        let second = try Socket(context: context, type: .pull)
        let error = try #require(throws: ZeroMQError.self) { try second.bind(endpoint) }
        #expect(error.code == EADDRINUSE)
        #expect(error == .addressInUse)
        #expect(error.description.contains(endpoint))
        #expect(error.description.contains("Address already in use"))
    }

    @Test("a socket asked of a terminated context is refused with contextTerminated, and a second terminate returns")
    func terminatedContext() throws {
        let ended = try Context()
        ended.terminate()
        ended.terminate()
        let error = try #require(throws: ZeroMQError.self) { try Socket(context: ended, type: .dealer) }
        #expect(error == .contextTerminated)
        #expect(error.description.contains("zmq_socket"))
    }

    @Test("a malformed endpoint")
    func malformedEndpoint() throws {
        let socket = try Socket(context: context, type: .pull)
        let error = try #require(throws: ZeroMQError.self) { try socket.bind("tcp://no-port-here") }
        #expect(error.code == EINVAL)
        #expect(error.description.contains("tcp://no-port-here"))
        #expect(error.description.contains("Invalid argument"))
    }

    @Test("an unknown transport")
    func unknownTransport() throws {
        let socket = try Socket(context: context, type: .pull)
        let error = try #require(throws: ZeroMQError.self) { try socket.connect("carrier-pigeon://loft") }
        #expect(error.code == EPROTONOSUPPORT)
        #expect(error == .unsupportedTransport)
        #expect(error.description.contains("carrier-pigeon://loft"))
    }

    @Test("static matchers work in catch clauses")
    func catchPattern() throws {
        let socket = try Socket(context: context, type: .pull)
        try socket.set(.receiveTimeout, 1)
        #expect(receiveTimesOut(socket))
    }

    @Test("a closed socket reports ENOTSOCK instead of crashing")
    func closedSocket() throws {
        let socket = try Socket(context: context, type: .push)
        socket.close()
        let error = try #require(throws: ZeroMQError.self) { try socket.send("x") }
        #expect(error.code == ENOTSOCK)
    }

    @Test("a terminated context makes blocking calls fail with ETERM")
    func contextTerminated() throws {
        let context = try Context()
        let socket = try Socket(context: context, type: .pull)
        context.shutdown()
        let error = try #require(throws: ZeroMQError.self) { try socket.receive() }
        #expect(error == .contextTerminated)
        socket.close()
        context.terminate()
    }
}

/// Whether a receive fails with `again`, matched with the static matcher in a catch clause.
private func receiveTimesOut(_ socket: Socket) -> Bool {
    do {
        _ = try socket.receive()
        return false
    } catch ZeroMQError.again {
        return true
    } catch {
        return false
    }
}
