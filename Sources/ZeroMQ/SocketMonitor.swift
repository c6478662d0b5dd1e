import CZeroMQ

/// One event of a socket monitor (`zmq_socket_monitor`): a connection made, lost, or a
/// handshake that failed and why.
public struct SocketEvent: Sendable, Hashable {
    /// The `ZMQ_EVENT_*` bit.
    public let event: Int32
    /// The event's value: for ``isHandshakeFailedProtocol`` a `ZMQ_PROTOCOL_ERROR_*` code, for
    /// ``isHandshakeFailedAuth`` the ZAP status code (such as 400), for others an fd or errno.
    public let value: UInt32
    /// The endpoint concerned.
    public let endpoint: String

    /// A connection to the peer was made (`ZMQ_EVENT_CONNECTED`), before any handshake.
    public var isConnected: Bool { event == ZMQ_EVENT_CONNECTED }
    /// The handshake succeeded (`ZMQ_EVENT_HANDSHAKE_SUCCEEDED`).
    public var isHandshakeSucceeded: Bool { event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED }
    /// The peer refused this side's credentials (`ZMQ_EVENT_HANDSHAKE_FAILED_AUTH`).
    public var isHandshakeFailedAuth: Bool { event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH }
    /// The handshake broke a rule of the protocol (`ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL`),
    /// for example a mechanism mismatch or a box that does not decrypt.
    public var isHandshakeFailedProtocol: Bool { event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL }
    /// The connection closed during the handshake, without a reason
    /// (`ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL`).
    public var isHandshakeFailedNoDetail: Bool { event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL }
    /// The peers' mechanisms differ (one uses CURVE, the other not).
    public var isMechanismMismatch: Bool { isHandshakeFailedProtocol && value == UInt32(ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) }
    /// A CURVE box did not decrypt: the keys do not belong together.
    public var isCryptographic: Bool { isHandshakeFailedProtocol && value == UInt32(ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC) }

    /// The handshake events: succeeded and the three kinds of failure.
    public static let handshakeEvents: Int32 =
        ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
        | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL

    /// The handshake events and `ZMQ_EVENT_CONNECTED`.
    public static let connectionEvents: Int32 = handshakeEvents | ZMQ_EVENT_CONNECTED

    /// Reads an event from the monitor's two frames.
    /// - Returns: `nil` when the frames are not a monitor event.
    public init?(frames: [[UInt8]]) {
        guard frames.count == 2, frames[0].count == 6 else { return nil }
        let head = frames[0]
        // Native byte order, as libzmq writes it.
        event = Int32(UInt16(head[0]) | UInt16(head[1]) << 8)
        value = UInt32(head[2]) | UInt32(head[3]) << 8 | UInt32(head[4]) << 16 | UInt32(head[5]) << 24
        endpoint = String(decoding: frames[1], as: UTF8.self)
    }
}

extension Socket {
    /// Starts monitoring this socket and returns the PAIR socket its events arrive on (two
    /// frames each, read them with ``SocketEvent/init(frames:)``). Close the PAIR before
    /// this socket; the monitor stops when this socket closes.
    /// - Parameters:
    ///   - endpoint: an `inproc://` endpoint unique in the context.
    ///   - events: a mask of `ZMQ_EVENT_*` bits.
    /// - Returns: the connected PAIR socket, in the same context, on the caller's thread.
    /// - Throws: `ZeroMQError`.
    public func monitor(at endpoint: String, events: Int32) throws(ZeroMQError) -> Socket {
        let handle = try open("zmq_socket_monitor(\(endpoint))")
        try zmqCall("zmq_socket_monitor(\(endpoint))") { zmq_socket_monitor(handle, endpoint, events) }
        let pair = try Socket(context: context, type: .pair)
        try pair.connect(endpoint)
        return pair
    }
}
