import CZeroMQ

/// A ZeroMQ socket, owned by one thread.
///
/// libzmq sockets are not thread-safe, so `Socket` is not `Sendable`: create it, use it and
/// close it on one thread (an ``IOLoop`` owns sockets for async code). The socket keeps its
/// ``Context`` alive and closes itself on deinit.
///
/// New sockets get a linger of 0, unlike libzmq's default of "forever": otherwise a message
/// to a peer that never comes would make context termination hang. Set ``SocketOption/linger``
/// to keep unsent messages for a while at close.
public final class Socket {
    /// The context the socket belongs to.
    public let context: Context
    /// The socket's pattern.
    public let type: SocketType
    private(set) var handle: UnsafeMutableRawPointer?
    /// Set by every call that may process the socket's commands and so take the activity its
    /// file descriptor signals: a send or receive, a bind, connect, unbind or disconnect, an
    /// ``events()`` call. An ``IOLoop`` then asks `ZMQ_EVENTS` before it sleeps on the socket
    /// again (``loopEvents()``, which clears it): the work, timers and handlers it runs may
    /// touch any of its sockets.
    var mayHideActivity = false

    /// Creates a socket.
    /// - Parameters:
    ///   - context: the context that owns it.
    ///   - type: the pattern.
    /// - Throws: `ZeroMQError` (for example `contextTerminated`).
    public init(context: Context, type: SocketType) throws(ZeroMQError) {
        // A terminated context's handle is freed: libzmq cannot say ETERM for it any more.
        guard !context.isTerminated else { throw ZeroMQError(code: ETERM, operation: "zmq_socket(\(type))") }
        guard let handle = zmq_socket(context.handle, type.rawValue) else {
            throw ZeroMQError(code: czmq_errno(), operation: "zmq_socket(\(type))")
        }
        self.context = context
        self.type = type
        self.handle = handle
        try set(.linger, 0)
    }

    deinit { close() }

    /// Closes the socket. Later calls on it throw `ENOTSOCK`. Safe to call more than once.
    public func close() {
        guard let handle else { return }
        zmq_close(handle)
        self.handle = nil
    }

    /// Whether ``close()`` has been called.
    public var isClosed: Bool { handle == nil }

    func open(_ operation: @autoclosure () -> String) throws(ZeroMQError) -> UnsafeMutableRawPointer {
        guard let handle else { throw ZeroMQError(code: ENOTSOCK, operation: operation()) }
        return handle
    }

    // MARK: Endpoints

    /// Binds to an endpoint and returns the endpoint actually bound.
    ///
    /// `tcp://127.0.0.1:*` binds an ephemeral port and returns it (`tcp://127.0.0.1:40123`).
    /// - Parameter endpoint: `tcp://`, `ipc://` or `inproc://` address.
    /// - Returns: the resolved endpoint (`ZMQ_LAST_ENDPOINT`).
    /// - Throws: `ZeroMQError`: `addressInUse`, `invalidArgument` for a malformed endpoint,
    ///   `unsupportedTransport` for an unknown transport.
    @discardableResult
    public func bind(_ endpoint: String) throws(ZeroMQError) -> String {
        mayHideActivity = true
        let handle = try open("bind(\(endpoint))")
        try zmqCall("bind(\"\(endpoint)\")") { zmq_bind(handle, endpoint) }
        return try get(.lastEndpoint)
    }

    /// Removes a binding made by ``bind(_:)``.
    /// - Parameter endpoint: the endpoint `bind` returned.
    /// - Throws: `ZeroMQError` (`ENOENT` if it was not bound).
    public func unbind(_ endpoint: String) throws(ZeroMQError) {
        mayHideActivity = true
        let handle = try open("unbind(\(endpoint))")
        try zmqCall("unbind(\"\(endpoint)\")") { zmq_unbind(handle, endpoint) }
    }

    /// Connects to an endpoint. libzmq connects in the background and reconnects by itself.
    /// - Parameter endpoint: `tcp://`, `ipc://` or `inproc://` address.
    /// - Throws: `ZeroMQError` for a malformed endpoint or unknown transport.
    public func connect(_ endpoint: String) throws(ZeroMQError) {
        mayHideActivity = true
        let handle = try open("connect(\(endpoint))")
        try zmqCall("connect(\"\(endpoint)\")") { zmq_connect(handle, endpoint) }
    }

    /// Drops a connection made by ``connect(_:)``.
    /// - Parameter endpoint: the endpoint given to `connect`.
    /// - Throws: `ZeroMQError` (`ENOENT` if not connected).
    public func disconnect(_ endpoint: String) throws(ZeroMQError) {
        mayHideActivity = true
        let handle = try open("disconnect(\(endpoint))")
        try zmqCall("disconnect(\"\(endpoint)\")") { zmq_disconnect(handle, endpoint) }
    }

    /// Subscribes a SUB socket to messages starting with `prefix` (empty: everything).
    /// - Parameter prefix: the topic prefix.
    public func subscribe(_ prefix: [UInt8] = []) throws(ZeroMQError) {
        try set(SocketOption<[UInt8]>(code: ZMQ_SUBSCRIBE, name: "subscribe"), prefix)
    }

    /// Subscribes a SUB socket to messages starting with the UTF-8 of `prefix`.
    /// - Parameter prefix: the topic prefix.
    public func subscribe(_ prefix: String) throws(ZeroMQError) { try subscribe(Array(prefix.utf8)) }

    /// Removes one subscription made by ``subscribe(_:)-([UInt8])``.
    /// - Parameter prefix: the topic prefix.
    public func unsubscribe(_ prefix: [UInt8] = []) throws(ZeroMQError) {
        try set(SocketOption<[UInt8]>(code: ZMQ_UNSUBSCRIBE, name: "unsubscribe"), prefix)
    }

    // MARK: Options

    /// Sets a socket option.
    /// - Parameters:
    ///   - option: an entry of the option table, such as `.linger`.
    ///   - value: the value, of the option's type.
    /// - Throws: `ZeroMQError` (`invalidArgument` for a value libzmq refuses).
    public func set<Value>(_ option: SocketOption<Value>, _ value: Value) throws(ZeroMQError) {
        let handle = try open("setsockopt(\(option.name))")
        _ = try value.withOptionBytes { bytes throws(ZeroMQError) in
            try zmqCall("setsockopt(\(option.name))") {
                zmq_setsockopt(handle, option.code, bytes.baseAddress, bytes.count)
            }
        }
    }

    /// Reads a socket option.
    /// - Parameter option: an entry of the option table, such as `.lastEndpoint`.
    /// - Returns: the current value.
    /// - Throws: `ZeroMQError`.
    public func get<Value>(_ option: SocketOption<Value>) throws(ZeroMQError) -> Value {
        try Value.read(option: option.code, from: try open("getsockopt(\(option.name))"), name: option.name)
    }

    /// The ready events right now (see ``PollEvents``).
    public func events() throws(ZeroMQError) -> PollEvents {
        mayHideActivity = true
        return PollEvents(rawValue: Int16(truncatingIfNeeded: try get(.events)))
    }

    /// ``events()`` as the I/O loop asks before it sleeps: what it learns covers any activity
    /// taken before.
    func loopEvents() throws(ZeroMQError) -> PollEvents {
        mayHideActivity = false
        return PollEvents(rawValue: Int16(truncatingIfNeeded: try get(.events)))
    }
}
