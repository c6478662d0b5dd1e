import CZeroMQ

/// A value a socket option can hold: converted to and from libzmq's option buffer.
public protocol SocketOptionValue: Sendable {
    /// Calls `body` with the bytes libzmq expects for this value.
    func withOptionBytes<R>(_ body: (UnsafeRawBufferPointer) throws(ZeroMQError) -> R) throws(ZeroMQError) -> R
    /// Reads a value of this type from a socket option.
    static func read(option: Int32, from socket: UnsafeMutableRawPointer, name: String) throws(ZeroMQError) -> Self
}

extension Int32: SocketOptionValue {
    /// The 4-byte integer libzmq takes.
    public func withOptionBytes<R>(_ body: (UnsafeRawBufferPointer) throws(ZeroMQError) -> R) throws(ZeroMQError) -> R {
        var copy = self
        return try Swift.withUnsafeBytes(of: &copy) { buffer throws(ZeroMQError) in try body(buffer) }
    }
    /// Reads a 4-byte integer option.
    public static func read(option: Int32, from socket: UnsafeMutableRawPointer, name: String) throws(ZeroMQError) -> Int32 {
        var value: Int32 = 0
        var size = MemoryLayout<Int32>.size
        try zmqCall("getsockopt(\(name))") { zmq_getsockopt(socket, option, &value, &size) }
        return value
    }
}

extension Int64: SocketOptionValue {
    /// The 8-byte integer libzmq takes.
    public func withOptionBytes<R>(_ body: (UnsafeRawBufferPointer) throws(ZeroMQError) -> R) throws(ZeroMQError) -> R {
        var copy = self
        return try Swift.withUnsafeBytes(of: &copy) { buffer throws(ZeroMQError) in try body(buffer) }
    }
    /// Reads an 8-byte integer option.
    public static func read(option: Int32, from socket: UnsafeMutableRawPointer, name: String) throws(ZeroMQError) -> Int64 {
        var value: Int64 = 0
        var size = MemoryLayout<Int64>.size
        try zmqCall("getsockopt(\(name))") { zmq_getsockopt(socket, option, &value, &size) }
        return value
    }
}

extension Bool: SocketOptionValue {
    /// libzmq's boolean options are 4-byte integers, 0 or 1.
    public func withOptionBytes<R>(_ body: (UnsafeRawBufferPointer) throws(ZeroMQError) -> R) throws(ZeroMQError) -> R {
        try Int32(self ? 1 : 0).withOptionBytes(body)
    }
    /// Reads a boolean (4-byte integer) option.
    public static func read(option: Int32, from socket: UnsafeMutableRawPointer, name: String) throws(ZeroMQError) -> Bool {
        try Int32.read(option: option, from: socket, name: name) != 0
    }
}

extension Array: SocketOptionValue where Element == UInt8 {
    /// Binary options (routing id, subscription prefix, 32-byte CURVE keys) as raw bytes.
    public func withOptionBytes<R>(_ body: (UnsafeRawBufferPointer) throws(ZeroMQError) -> R) throws(ZeroMQError) -> R {
        // Array's closures rethrow untyped errors; carry the typed one out in a Result.
        try withUnsafeBytes { buffer in Result { () throws(ZeroMQError) in try body(buffer) } }.get()
    }
    /// Reads a binary option of up to 256 bytes.
    public static func read(option: Int32, from socket: UnsafeMutableRawPointer, name: String) throws(ZeroMQError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 256)
        var size = buffer.count
        _ = try buffer.withUnsafeMutableBytes { raw in
            Result { () throws(ZeroMQError) in
                try zmqCall("getsockopt(\(name))") { zmq_getsockopt(socket, option, raw.baseAddress, &size) }
            }
        }.get()
        return Array(buffer.prefix(size))
    }
}

extension String: SocketOptionValue {
    /// String options are passed without a terminating NUL.
    public func withOptionBytes<R>(_ body: (UnsafeRawBufferPointer) throws(ZeroMQError) -> R) throws(ZeroMQError) -> R {
        try Array(utf8).withOptionBytes(body)
    }
    /// Reads a string option; libzmq returns it NUL-terminated.
    public static func read(option: Int32, from socket: UnsafeMutableRawPointer, name: String) throws(ZeroMQError) -> String {
        var buffer = [UInt8](repeating: 0, count: 1024)
        var size = buffer.count
        _ = try buffer.withUnsafeMutableBytes { raw in
            Result { () throws(ZeroMQError) in
                try zmqCall("getsockopt(\(name))") { zmq_getsockopt(socket, option, raw.baseAddress, &size) }
            }
        }.get()
        let bytes = buffer.prefix(size)
        return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }
}

/// One socket option: its libzmq code, its name and, through `Value`, its type.
///
/// Options live in one typed table (the static members below), so a value of the wrong type
/// does not compile: `try socket.set(.linger, 0)`, `try socket.get(.lastEndpoint)`.
public struct SocketOption<Value: SocketOptionValue>: Sendable, CustomStringConvertible {
    /// The `ZMQ_*` option code.
    public let code: Int32
    /// The option's name, used in error messages.
    public let name: String

    /// Declares an option not in the table.
    /// - Parameters:
    ///   - code: the `ZMQ_*` constant.
    ///   - name: a readable name for errors.
    public init(code: Int32, name: String) {
        self.code = code
        self.name = name
    }

    /// The option's name.
    public var description: String { name }
}

extension SocketOption where Value == Int32 {
    /// Milliseconds pending messages may wait at close (`ZMQ_LINGER`); -1 waits forever.
    public static var linger: Self { .init(code: ZMQ_LINGER, name: "linger") }
    /// Outgoing queue limit in messages (`ZMQ_SNDHWM`); 0 means none.
    public static var sendHighWaterMark: Self { .init(code: ZMQ_SNDHWM, name: "sendHighWaterMark") }
    /// Incoming queue limit in messages (`ZMQ_RCVHWM`); 0 means none.
    public static var receiveHighWaterMark: Self { .init(code: ZMQ_RCVHWM, name: "receiveHighWaterMark") }
    /// Milliseconds between ZMTP heartbeat PINGs (`ZMQ_HEARTBEAT_IVL`); 0 disables.
    ///
    /// - Warning: libzmq 4.3.4 (Debian 12) can abort the process in its stream engine when a
    ///   heartbeat meets a peer that died (libzmq issues 4364, 4841). StateBus never sets the
    ///   heartbeat options; it has heartbeats of its own in the protocol.
    public static var heartbeatInterval: Self { .init(code: ZMQ_HEARTBEAT_IVL, name: "heartbeatInterval") }
    /// Time-to-live the peer should apply to this side (`ZMQ_HEARTBEAT_TTL`), in ms.
    public static var heartbeatTTL: Self { .init(code: ZMQ_HEARTBEAT_TTL, name: "heartbeatTTL") }
    /// Milliseconds to wait for a PONG before closing (`ZMQ_HEARTBEAT_TIMEOUT`).
    public static var heartbeatTimeout: Self { .init(code: ZMQ_HEARTBEAT_TIMEOUT, name: "heartbeatTimeout") }
    /// First reconnect delay in ms (`ZMQ_RECONNECT_IVL`).
    public static var reconnectInterval: Self { .init(code: ZMQ_RECONNECT_IVL, name: "reconnectInterval") }
    /// Largest reconnect delay in ms for exponential back-off (`ZMQ_RECONNECT_IVL_MAX`).
    public static var reconnectIntervalMax: Self { .init(code: ZMQ_RECONNECT_IVL_MAX, name: "reconnectIntervalMax") }
    /// Milliseconds a blocking send may wait before `again` (`ZMQ_SNDTIMEO`); -1 forever.
    public static var sendTimeout: Self { .init(code: ZMQ_SNDTIMEO, name: "sendTimeout") }
    /// Milliseconds a blocking receive may wait before `again` (`ZMQ_RCVTIMEO`); -1 forever.
    public static var receiveTimeout: Self { .init(code: ZMQ_RCVTIMEO, name: "receiveTimeout") }
    /// The file descriptor that signals the socket's activity (`ZMQ_FD`), for a poll of one's
    /// own: it becomes readable when something may have changed, after which ``events``
    /// says what (it is not a plain readiness signal). Read only.
    public static var fileDescriptor: Self { .init(code: ZMQ_FD, name: "fileDescriptor") }
    /// Ready events (`ZMQ_EVENTS`): a mask of `ZMQ_POLLIN` and `ZMQ_POLLOUT`. Read only.
    public static var events: Self { .init(code: ZMQ_EVENTS, name: "events") }
    /// The socket's type code (`ZMQ_TYPE`). Read only.
    public static var type: Self { .init(code: ZMQ_TYPE, name: "type") }
    /// Kernel send buffer size in bytes (`ZMQ_SNDBUF`); -1 keeps the OS default.
    public static var sendBufferSize: Self { .init(code: ZMQ_SNDBUF, name: "sendBufferSize") }
    /// Kernel receive buffer size in bytes (`ZMQ_RCVBUF`); -1 keeps the OS default.
    public static var receiveBufferSize: Self { .init(code: ZMQ_RCVBUF, name: "receiveBufferSize") }
}

extension SocketOption where Value == Int64 {
    /// Largest inbound message in bytes (`ZMQ_MAXMSGSIZE`); a peer sending more is
    /// disconnected. -1 means no limit.
    public static var maxMessageSize: Self { .init(code: ZMQ_MAXMSGSIZE, name: "maxMessageSize") }
}

extension SocketOption where Value == Bool {
    /// Queue only to completed connections (`ZMQ_IMMEDIATE`).
    public static var immediate: Self { .init(code: ZMQ_IMMEDIATE, name: "immediate") }
    /// A ROUTER reports unroutable messages as `hostUnreachable` instead of dropping them
    /// (`ZMQ_ROUTER_MANDATORY`).
    public static var routerMandatory: Self { .init(code: ZMQ_ROUTER_MANDATORY, name: "routerMandatory") }
    /// A new ROUTER peer with a known routing id takes over the old one (`ZMQ_ROUTER_HANDOVER`).
    public static var routerHandover: Self { .init(code: ZMQ_ROUTER_HANDOVER, name: "routerHandover") }
    /// An XPUB passes every subscription to the application, not only new ones
    /// (`ZMQ_XPUB_VERBOSE`).
    public static var xpubVerbose: Self { .init(code: ZMQ_XPUB_VERBOSE, name: "xpubVerbose") }
    /// An XPUB reports `again` instead of dropping when a subscriber is full
    /// (`ZMQ_XPUB_NODROP`).
    public static var xpubNoDrop: Self { .init(code: ZMQ_XPUB_NODROP, name: "xpubNoDrop") }
    /// An XPUB admits no subscription by itself (`ZMQ_XPUB_MANUAL`): it passes each one to
    /// the application, which admits it by calling ``Socket/subscribe(_:)-([UInt8])`` on the
    /// XPUB before it receives the next message (the subscription applies to the connection
    /// the last received one came from). libzmq still records every subscription a
    /// connection sends, admitted or not, until that connection closes.
    public static var xpubManual: Self { .init(code: ZMQ_XPUB_MANUAL, name: "xpubManual") }
    /// Keep only the newest message in each queue (`ZMQ_CONFLATE`).
    public static var conflate: Self { .init(code: ZMQ_CONFLATE, name: "conflate") }
    /// Whether the last received frame has more frames after it (`ZMQ_RCVMORE`). Read only.
    public static var receiveMore: Self { .init(code: ZMQ_RCVMORE, name: "receiveMore") }
    /// Act as a CURVE server (`ZMQ_CURVE_SERVER`); needs `curveSecretKey`.
    public static var curveServer: Self { .init(code: ZMQ_CURVE_SERVER, name: "curveServer") }
    /// Authentication fails when no ZAP handler answers (`ZMQ_ZAP_ENFORCE_DOMAIN`, a draft
    /// option libzmq 4.3 accepts): without it a CURVE server whose handler is missing admits
    /// every client key.
    public static var zapEnforceDomain: Self { .init(code: ZMQ_ZAP_ENFORCE_DOMAIN, name: "zapEnforceDomain") }
    /// Allow IPv6 on tcp endpoints (`ZMQ_IPV6`).
    public static var ipv6: Self { .init(code: ZMQ_IPV6, name: "ipv6") }
}

extension SocketOption where Value == [UInt8] {
    /// The identity a ROUTER peer sees for this socket (`ZMQ_ROUTING_ID`), 1 to 255 bytes.
    public static var routingID: Self { .init(code: ZMQ_ROUTING_ID, name: "routingID") }
    /// This side's CURVE public key, 32 bytes (`ZMQ_CURVE_PUBLICKEY`).
    public static var curvePublicKey: Self { .init(code: ZMQ_CURVE_PUBLICKEY, name: "curvePublicKey") }
    /// This side's CURVE secret key, 32 bytes (`ZMQ_CURVE_SECRETKEY`).
    public static var curveSecretKey: Self { .init(code: ZMQ_CURVE_SECRETKEY, name: "curveSecretKey") }
    /// The server's CURVE public key a client expects, 32 bytes (`ZMQ_CURVE_SERVERKEY`).
    public static var curveServerKey: Self { .init(code: ZMQ_CURVE_SERVERKEY, name: "curveServerKey") }
}

extension SocketOption where Value == String {
    /// The endpoint of the last bind or connect, with the real port for `tcp://…:*`
    /// (`ZMQ_LAST_ENDPOINT`). Read only.
    public static var lastEndpoint: Self { .init(code: ZMQ_LAST_ENDPOINT, name: "lastEndpoint") }
    /// The ZAP domain for authentication (`ZMQ_ZAP_DOMAIN`).
    public static var zapDomain: Self { .init(code: ZMQ_ZAP_DOMAIN, name: "zapDomain") }
}
