/// A ZAP request (ZeroMQ RFC 27): what libzmq asks the authentication handler bound to
/// ``ZAPRequest/endpoint`` in the same context, once per incoming connection handshake of a
/// socket that authenticates (CURVE always; NULL and PLAIN when a handler is bound).
///
/// Received on a ROUTER bound to the endpoint, the frames are: routing id, an empty
/// delimiter, then version, request id, domain, address, routing id of the socket,
/// mechanism and the mechanism's credentials (for CURVE one frame: the client's 32-byte
/// public key).
public struct ZAPRequest: Sendable, Hashable {
    /// The endpoint libzmq sends ZAP requests to.
    public static let endpoint = "inproc://zeromq.zap.01"

    /// The ROUTER's routing id of the libzmq side that asked; the reply goes back to it.
    public let replyRoutingID: [UInt8]
    /// The protocol version; always "1.0".
    public let version: String
    /// Echoed in the reply, so libzmq matches it.
    public let requestID: [UInt8]
    /// The socket's `ZMQ_ZAP_DOMAIN`.
    public let domain: String
    /// The peer's address (an IP address for tcp; empty for ipc).
    public let address: String
    /// `"NULL"`, `"PLAIN"` or `"CURVE"`.
    public let mechanism: String
    /// The credentials: for CURVE the client's public key (32 bytes).
    public let credentials: [[UInt8]]

    /// Reads a request from the frames a ROUTER received.
    /// - Parameter frames: every frame, routing id first.
    /// - Returns: `nil` when the frames are not a ZAP request (wrong count or delimiter).
    public init?(routerFrames frames: [[UInt8]]) {
        guard frames.count >= 8, frames[1].isEmpty else { return nil }
        replyRoutingID = frames[0]
        version = String(decoding: frames[2], as: UTF8.self)
        requestID = frames[3]
        domain = String(decoding: frames[4], as: UTF8.self)
        address = String(decoding: frames[5], as: UTF8.self)
        mechanism = String(decoding: frames[7], as: UTF8.self)
        credentials = Array(frames[8...])
    }

    /// The frames of the reply, for the same ROUTER.
    /// - Parameters:
    ///   - status: "200" (admitted), "300" (temporary failure), "400" (refused) or "500".
    ///   - text: why, for logs.
    ///   - userID: for an admitted peer, attached to every message of the connection as the
    ///     `"User-Id"` property (``Message/property(_:)``).
    /// - Returns: the frames to send, routing id first.
    public func reply(status: String, text: String, userID: String = "") -> [[UInt8]] {
        [replyRoutingID, [], Array("1.0".utf8), requestID, Array(status.utf8), Array(text.utf8), Array(userID.utf8), []]
    }
}
