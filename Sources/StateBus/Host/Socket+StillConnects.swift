import ZeroMQ

extension Socket {
    /// Whether this control ROUTER still has the connection `identity`, asked by sending it
    /// an unsolicited pong: request id 0 (answering no request) in protocol version 1, which
    /// every client reads and ignores, carrying the serving party's `epoch`, so that no
    /// client takes it for a restart. The serving sockets are router-mandatory
    /// (``ServingSockets``), so libzmq refuses a message at once (`EHOSTUNREACH`) for a
    /// connection it knows to be closed or closing, and only then is the answer `false`.
    ///
    /// A connection whose queue is full is there (slow, not gone), and so is one the answer
    /// is unsure of (any other failure): a binding is only ever freed for a connection known
    /// to be gone. A close libzmq has not processed yet, or a peer that vanished without one
    /// (a crashed machine), still counts as there: the view-id lease frees those.
    func stillConnects(_ identity: [UInt8], epoch: UInt64) -> Bool {
        guard let probe = try? HostReply.pong(epoch: epoch).encoded(version: StateBusProtocol.version1, requestID: 0) else { return true }
        do {
            guard try send(identity, more: true, wait: false) else { return true }
            // libzmq takes the rest of a message whose first frame it took.
            _ = try send(probe, wait: false)
            return true
        } catch {
            return error != .hostUnreachable
        }
    }
}
