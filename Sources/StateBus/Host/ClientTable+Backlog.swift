// Handing the replies a client could not take yet to its socket, the same at a host and a
// relay.

extension ClientTable {
    /// What handing one reply to a control socket did.
    enum Delivery {
        /// The socket took it.
        case sent
        /// The socket takes no more for this client now (its queue in libzmq is full).
        case full
        /// The client has gone.
        case gone
    }

    /// Hands a client's queued replies to the socket, oldest first, until the socket is full
    /// again or none is left; a client found gone is dropped.
    ///
    /// It goes on while the socket takes them, whatever they hold: a run of identical
    /// replies (a client's pongs, say) drains in one call, not one per call.
    /// - Parameter deliver: one attempt to hand a reply to the socket.
    mutating func drainBacklog(of identity: [UInt8], through deliver: ([UInt8]) -> Delivery) {
        while let bytes = firstReply(of: identity) {
            switch deliver(bytes) {
            case .sent: removeFirstReply(of: identity)
            case .full: return
            case .gone:
                drop(identity)
                return
            }
        }
    }
}
