import StateBusRuntime
import Synchronization

/// A socket owned by an ``IOLoop``, used from async code: sends are queued in order and
/// flushed by the loop thread, received messages arrive as an `AsyncSequence`.
///
/// ```swift
/// let loop = try IOLoop(context: Context())
/// let pull = try await AsyncSocket(loop: loop, type: .pull)
/// let endpoint = try await pull.bind("tcp://127.0.0.1:*")
/// for await frames in pull.messages { print(frames) }
/// ```
///
/// Sends never block the caller. A send that libzmq cannot take yet (a DEALER with no peer
/// yet, a full queue on a socket that does not drop) waits in the queue until the socket
/// becomes writable: nothing is dropped by the bridge. PUB sockets drop at the high-water
/// mark, as libzmq always does. Receiving applies back-pressure: when the consumer falls
/// more than `receiveBufferLimit` messages behind, the loop stops reading the socket.
public final class AsyncSocket: Sendable {
    /// One received message: its frames, in order.
    public typealias Frames = [[UInt8]]

    /// The loop that owns the socket.
    public let loop: IOLoop
    /// The socket's pattern.
    public let type: SocketType

    private let socket: LoopBound<Socket>
    /// The loop's hook that ends `messages` at shutdown, removed when this socket goes first.
    private let shutdownHook: LoopThread.ShutdownHookID
    private let inbox: MessageChannel<Frames>
    private let outbox = Locked(Outbox())
    private let failures = Atomic<Int>(0)

    private struct Outbox {
        var queue = FIFO<Frames>()
        var flushScheduled = false
    }

    /// Creates a socket on the loop's thread.
    /// - Parameters:
    ///   - loop: the loop that will own it.
    ///   - type: the pattern.
    ///   - receiveBufferLimit: how many received messages may wait for the consumer before
    ///     the loop stops reading.
    /// - Throws: `ZeroMQError`, or ``IOLoopError/shutDown``.
    public init(loop: IOLoop, type: SocketType, receiveBufferLimit: Int = 10_000) async throws {
        self.loop = loop
        self.type = type
        let resume = Locked<(@Sendable () -> Void)?>(nil)
        let inbox = MessageChannel<Frames>(limit: receiveBufferLimit) {
            resume.withLock { $0 }?()
        }
        self.inbox = inbox
        (socket, shutdownHook) = try await loop.submit { thread in
            let socket = try Socket(context: thread.context, type: type)
            let bound = LoopBound(socket, on: thread)
            let receives = type != .pub && type != .push
            thread.register(
                socket,
                onReadable: receives
                    ? {
                        Self.receiveAvailable(from: socket, into: inbox, thread: thread)
                    } : nil)
            let hook = thread.onShutdown { inbox.finish() }
            return (bound, hook)
        }
        let bound = socket
        resume.withLock { callback in
            callback = { loop.execute { thread in thread.setReadingPaused(false, for: bound.value) } }
        }
    }

    deinit {
        let socket = self.socket
        let inbox = self.inbox
        let hook = shutdownHook
        loop.execute { thread in
            thread.removeShutdownHook(hook)
            thread.unregister(socket.value)
            socket.value.close()
            inbox.finish()
        }
    }

    private static func receiveAvailable(from socket: Socket, into inbox: MessageChannel<Frames>, thread: LoopThread) {
        // Bounded per wake-up so one busy socket cannot starve the others.
        for _ in 0..<512 {
            guard let frames = try? socket.tryReceiveMultipart() else { return }
            if inbox.push(frames.map(\.bytes)) {
                thread.setReadingPaused(true, for: socket)
                return
            }
        }
    }

    // MARK: Configuration

    /// Runs `body` with the socket on the loop thread: set options, bind, connect.
    /// - Parameter body: the work; must not keep the socket.
    /// - Returns: what `body` returns.
    public func withSocket<Result: Sendable>(_ body: @escaping @Sendable (Socket) throws -> Result) async throws -> Result {
        let socket = self.socket
        return try await loop.submit { _ in try body(socket.value) }
    }

    /// Binds and returns the endpoint actually bound (the real port for `tcp://…:*`).
    public func bind(_ endpoint: String) async throws -> String {
        try await withSocket { try $0.bind(endpoint) }
    }

    /// Connects to an endpoint.
    public func connect(_ endpoint: String) async throws {
        try await withSocket { try $0.connect(endpoint) }
    }

    /// Subscribes a SUB socket to a prefix (empty: everything).
    public func subscribe(_ prefix: [UInt8] = []) async throws {
        try await withSocket { try $0.subscribe(prefix) }
    }

    // MARK: Sending

    /// Queues a multipart message for sending, in order after earlier sends.
    /// - Parameter frames: the frames; boundaries are kept at the receiver.
    /// - Throws: ``IOLoopError/shutDown`` when the loop has stopped.
    public func send(_ frames: Frames) throws(IOLoopError) {
        if loop.isShutDown { throw .shutDown }
        let mustSchedule = outbox.withLock { box -> Bool in
            box.queue.push(frames)
            defer { box.flushScheduled = true }
            return !box.flushScheduled
        }
        guard mustSchedule else { return }
        let socket = self.socket
        let accepted = loop.execute { [weak self] thread in self?.flush(socket.value, thread) }
        if !accepted { throw .shutDown }
    }

    /// Queues a one-frame message. See ``send(_:)-(Frames)``.
    public func send(_ bytes: [UInt8]) throws(IOLoopError) { try send([bytes]) }

    /// How many queued messages libzmq refused with an error (for example an unroutable
    /// ROUTER address with router-mandatory set); they are dropped and counted here.
    public var failedSends: Int { failures.load(ordering: .relaxed) }

    private func flush(_ socket: Socket, _ thread: LoopThread) {
        while true {
            let next = outbox.withLock { box -> Frames? in
                if let first = box.queue.first { return first }
                box.flushScheduled = false
                return nil
            }
            guard let frames = next else {
                thread.setWritableHandler(for: socket, nil)
                return
            }
            do {
                guard try socket.send(multipart: frames, wait: false) else {
                    thread.setWritableHandler(for: socket) { [weak self] in self?.flush(socket, thread) }
                    return
                }
            } catch {
                failures.add(1, ordering: .relaxed)
            }
            _ = outbox.withLock { $0.queue.pop() }
        }
    }

    // MARK: Receiving

    /// The received messages, in arrival order; ends when the socket or loop closes, and
    /// for a consumer task that is cancelled. One consumer at a time.
    public var messages: Messages { Messages(inbox: inbox) }

    /// The `AsyncSequence` of received messages.
    public struct Messages: AsyncSequence, Sendable {
        let inbox: MessageChannel<Frames>
        /// Creates the iterator.
        public func makeAsyncIterator() -> Iterator { Iterator(inbox: inbox) }

        /// Awaits each message in turn.
        public struct Iterator: AsyncIteratorProtocol {
            let inbox: MessageChannel<Frames>
            /// The next message, or `nil` at the end.
            public mutating func next() async -> Frames? { await inbox.next() }
        }
    }

    /// Closes the socket on the loop thread and ends ``messages``.
    public func close() async {
        let socket = self.socket
        let inbox = self.inbox
        _ = try? await loop.submit { thread in
            thread.unregister(socket.value)
            socket.value.close()
        }
        inbox.finish()
    }
}
