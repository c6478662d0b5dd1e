import CZeroMQ

extension Message {
    /// A metadata property of a received message (`zmq_msg_gets`): what the connection's
    /// handshake attached to every message it delivers, such as `"User-Id"` (the user id a
    /// ZAP handler returned for the connection), `"Peer-Address"` or `"Socket-Type"`.
    ///
    /// On a ROUTER the routing-id frame is made by the socket and carries none; read the
    /// property from a body frame.
    /// - Parameter name: the property's name (case-sensitive in libzmq 4.3).
    /// - Returns: the value, or `nil` when the message has no such property (or no metadata,
    ///   as a message that was never received).
    public func property(_ name: String) -> String? {
        guard let value = zmq_msg_gets(pointer, name) else { return nil }
        return String(cString: value)
    }
}
