import Testing
@testable import ZeroMQ

@Suite("The async bridge: an I/O loop thread and AsyncSequence receive")
struct AsyncBridgeTests {
    @Test("100,000 messages arrive in order, none lost")
    func orderedDelivery() async throws {
        let loop = try IOLoop(context: try Context())
        defer { loop.shutdown() }
        let pull = try await AsyncSocket(loop: loop, type: .pull, receiveBufferLimit: 1000)
        let push = try await AsyncSocket(loop: loop, type: .push)
        try await push.connect(try await pull.bind("tcp://127.0.0.1:*"))
        let total = 100_000
        let sender = Task {
            for index in 0..<total {
                var value = UInt32(index).littleEndian
                try push.send(withUnsafeBytes(of: &value) { Array($0) })
            }
        }
        var expected: UInt32 = 0
        for await frames in pull.messages {
            let value = frames[0].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
            #expect(UInt32(littleEndian: value) == expected)
            if UInt32(littleEndian: value) != expected { break }
            expected += 1
            if expected == total { break }
        }
        try await sender.value
        #expect(expected == UInt32(total))
        #expect(push.failedSends == 0)
    }

    @Test("a DEALER's sends before its peer exists are kept and delivered")
    func sendsBeforeConnection() async throws {
        let loop = try IOLoop(context: try Context())
        defer { loop.shutdown() }
        let dealer = try await AsyncSocket(loop: loop, type: .dealer)
        let path = "ipc://\(TemporaryFolder.make().path)/late"
        try await dealer.withSocket { try $0.set(.immediate, true) }
        try await dealer.connect(path)
        for index in 0..<10 { try dealer.send([UInt8(index)]) }
        let router = try await AsyncSocket(loop: loop, type: .router)
        _ = try await router.bind(path)
        var seen: [UInt8] = []
        for await frames in router.messages {
            seen.append(frames[1][0])
            if seen.count == 10 { break }
        }
        #expect(seen == Array(0..<10))
    }

    @Test("cancelling a receiving task ends its iteration")
    func cancellation() async throws {
        let loop = try IOLoop(context: try Context())
        defer { loop.shutdown() }
        let pull = try await AsyncSocket(loop: loop, type: .pull)
        _ = try await pull.bind("inproc://cancel-test")
        let receiver = Task { () -> Int in
            var count = 0
            for await _ in pull.messages { count += 1 }
            return count
        }
        receiver.cancel()
        #expect(await receiver.value == 0)
    }

    @Test("shutting the loop down while traffic flows returns promptly and ends receivers")
    func shutdownUnderLoad() async throws {
        let context = try Context()
        let loop = try IOLoop(context: context)
        let pull = try await AsyncSocket(loop: loop, type: .pull, receiveBufferLimit: 100)
        let push = try await AsyncSocket(loop: loop, type: .push)
        try await push.connect(try await pull.bind("tcp://127.0.0.1:*"))
        let sender = Task {
            while !Task.isCancelled {
                do { try push.send(Array(repeating: 0, count: 64)) } catch { return }
                await Task.yield()
            }
        }
        let firstArrived = AsyncStream<Void>.makeStream()
        let receiver = Task { () -> Int in
            var count = 0
            for await _ in pull.messages {
                count += 1
                if count == 1 { firstArrived.continuation.finish() }
            }
            return count
        }
        // Readiness: traffic is really flowing before the shutdown starts.
        for await _ in firstArrived.stream {}
        let clock = ContinuousClock()
        let took = clock.measure { loop.shutdown() }
        #expect(took < .seconds(5))
        #expect(await receiver.value >= 1)  // ends because the loop finished the sequence
        sender.cancel()
        #expect(throws: IOLoopError.shutDown) { try push.send([1]) }
        await #expect(throws: IOLoopError.self) { _ = try await pull.bind("inproc://after") }
        context.terminate()  // no hang: the loop closed its sockets
    }

    @Test("submit runs on the loop thread and returns the result")
    func submit() async throws {
        let loop = try IOLoop(context: try Context())
        defer { loop.shutdown() }
        #expect(!loop.isOnLoopThread)
        let onLoop = try await loop.submit { thread in thread.loop.isOnLoopThread }
        #expect(onLoop)
    }

    @Test("timers fire on the loop thread, repeating until cancelled")
    func timers() async throws {
        let loop = try IOLoop(context: try Context())
        defer { loop.shutdown() }
        let fired = AsyncStream<Int>.makeStream()
        _ = try await loop.submit { thread in
            let ticker = Ticker()
            ticker.id = thread.scheduleTimer(after: .milliseconds(1), repeating: .milliseconds(1)) {
                ticker.count += 1
                fired.continuation.yield(ticker.count)
                if ticker.count == 3, let id = ticker.id {
                    thread.cancelTimer(id)
                    fired.continuation.finish()
                }
            }
        }
        var seen: [Int] = []
        for await count in fired.stream { seen.append(count) }
        #expect(seen == [1, 2, 3])
    }

    @Test("a registered socket received from by work on the loop still has its handler called for what remains")
    func receiveOutsideTheHandler() async throws {
        let loop = try IOLoop(context: try Context())
        defer { loop.shutdown() }
        let handled = AsyncStream<String>.makeStream()
        let sockets = try await loop.submit { thread in
            let pull = try Socket(context: thread.context, type: .pull)
            try pull.bind("inproc://outside-the-handler")
            let push = try Socket(context: thread.context, type: .push)
            try push.connect("inproc://outside-the-handler")
            thread.register(pull) {
                while let message = try? pull.tryReceive() { handled.continuation.yield(String(decoding: message.bytes, as: UTF8.self)) }
            }
            return (LoopBound(pull, on: thread), LoopBound(push, on: thread))
        }
        // Work on the loop sends two messages and takes the first itself: that receive takes
        // the signal the socket's fd would have given for both.
        let first = try await loop.submit { thread in
            try sockets.1.value.send(Array("first".utf8))
            try sockets.1.value.send(Array("second".utf8))
            // The record ends here at the latest, in loop time: the handler runs in this turn
            // or never.
            _ = thread.scheduleTimer(after: .seconds(5)) { handled.continuation.finish() }
            return try sockets.0.value.tryReceive().map { String(decoding: $0.bytes, as: UTF8.self) }
        }
        #expect(first == "first")
        var answers = handled.stream.makeAsyncIterator()
        #expect(await answers.next() == "second", "the handler never heard of the message left on the socket")
        try await loop.submit { _ in sockets.1.value.close() }  // the loop closes the registered one
    }

    @Test("a socket unregistered by another socket's handler in the same turn gets no more calls")
    func unregisteredInTheSameTurn() async throws {
        let loop = try IOLoop(context: try Context())
        defer { loop.shutdown() }
        let calls = AsyncStream<String>.makeStream()
        _ = try await loop.submit { thread in
            // Two sockets with a message each, registered together: both are ready in the
            // loop's next turn, and the first one's handler unregisters the second.
            var pulls: [Socket] = []
            for name in ["first", "second"] {
                let pull = try Socket(context: thread.context, type: .pull)
                try pull.bind("inproc://same-turn-\(name)")
                let push = try Socket(context: thread.context, type: .push)
                try push.connect("inproc://same-turn-\(name)")
                try push.send(Array(name.utf8))
                push.close()
                pulls.append(pull)
            }
            let (first, second) = (pulls[0], pulls[1])
            thread.register(first) {
                // Called again without a message when its fd wakes the poll: only the first time counts.
                guard (try? first.tryReceive()) != nil else { return }
                calls.continuation.yield("first")
                thread.unregister(second)
                // The record ends in a later turn: by then the second's handler would have run.
                _ = thread.scheduleTimer(after: .milliseconds(20)) { calls.continuation.finish() }
            }
            thread.register(second) {
                guard (try? second.tryReceive()) != nil else { return }
                calls.continuation.yield("second")
            }
        }
        var seen: [String] = []
        for await name in calls.stream { seen.append(name) }
        #expect(seen == ["first"])
    }

    @Test("a registered socket closed without unregistering leaves the poll: the loop sleeps again")
    func closedWithoutUnregister() async throws {
        let loop = try IOLoop(context: try Context())
        defer { loop.shutdown() }
        let registered = try await loop.submit { thread in
            let socket = try Socket(context: thread.context, type: .pull)
            _ = try socket.bind("tcp://127.0.0.1:*")
            thread.register(socket) {}
            return LoopBound(socket, on: thread)
        }
        // A turn polls it once, then it closes behind the loop's back.
        _ = try await loop.submit { _ in }
        _ = try await loop.submit { _ in registered.value.close() }
        let used = try await cpuUsed(by: loop, over: .milliseconds(500))
        #expect(used < .milliseconds(20), "the loop used \(used) of CPU in 500 ms with nothing to do")
    }

    @Test("sockets that come and go on a long-lived loop leave no shutdown hook behind")
    func socketsLeaveNoHooks() async throws {
        let loop = try IOLoop(context: try Context())
        defer { loop.shutdown() }
        let before = try await loop.submit { $0.shutdownHookCount }
        for _ in 0..<100 {
            let socket = try await AsyncSocket(loop: loop, type: .pull)
            _ = try await socket.bind("tcp://127.0.0.1:*")
        }
        // Each socket's deinit queued its cleanup on the loop before this.
        let after = try await loop.submit { $0.shutdownHookCount }
        #expect(after == before, "\(after - before) hooks of closed sockets are still held")
    }

    @Test("a one-shot timer cancelled by another due in the same turn does not fire")
    func timerCancelledInTheSameTurn() async throws {
        let loop = try IOLoop(context: try Context())
        defer { loop.shutdown() }
        let fired = AsyncStream<String>.makeStream()
        _ = try await loop.submit { thread in
            let ticker = Ticker()
            // Both are due at the next turn; the first cancels the second.
            _ = thread.scheduleTimer(after: .zero) {
                fired.continuation.yield("first")
                if let id = ticker.id { thread.cancelTimer(id) }
            }
            ticker.id = thread.scheduleTimer(after: .zero) { fired.continuation.yield("cancelled") }
            // A later timer ends the record: by then the cancelled one would have fired.
            _ = thread.scheduleTimer(after: .milliseconds(20)) {
                fired.continuation.yield("later")
                fired.continuation.finish()
            }
        }
        var seen: [String] = []
        for await name in fired.stream { seen.append(name) }
        #expect(seen == ["first", "later"])
    }

    @Test("work queued when the loop stops is not lost silently: its ifStopped runs instead")
    func workQueuedAtShutdownHearsOfIt() async throws {
        let loop = try IOLoop(context: try Context())
        defer { loop.shutdown() }
        let heard = AsyncStream<String>.makeStream()
        loop.execute { _ in
            // Queued behind this turn, then the loop is asked to stop (from its own thread,
            // which only asks): the queued work never runs.
            loop.execute({ _ in heard.continuation.yield("ran") }, ifStopped: { heard.continuation.yield("stopped") })
            loop.shutdown()
        }
        var answers = heard.stream.makeAsyncIterator()
        #expect(await answers.next() == "stopped")
        let accepted = loop.execute({ _ in }, ifStopped: {})
        #expect(!accepted, "a stopped loop takes no more work")
    }
}

/// Counts timer ticks on the loop thread.
private final class Ticker {
    var count = 0
    var id: LoopThread.TimerID?
}
