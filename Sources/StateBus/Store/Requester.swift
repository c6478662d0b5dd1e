/// Who sent a request and how to answer it: the connection (its ROUTER routing id), the
/// request's id, and the protocol version the answer must speak (the request's own).
struct Requester: Sendable {
    /// The connection's routing id.
    var identity: [UInt8]
    /// The request id to echo (0 when the request could not be read).
    var requestID: UInt64
    /// The request's `protocol_version`: 1 or 2 (1 for requests that could not be read).
    var version: UInt32

    init(identity: [UInt8], requestID: UInt64 = 0, version: UInt32 = StateBusProtocol.version1) {
        self.identity = identity
        self.requestID = requestID
        self.version = version
    }
}
