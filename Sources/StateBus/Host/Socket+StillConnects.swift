import ZeroMQ

extension Socket {
    /// Whether this control ROUTER still has the connection `identity`, asked by sending it
    /// `probe`: an unsolicited pong (``stillConnectsProbe(epoch:)``), which every client
    /// ignores. The serving sockets are router-mandatory (``ServingSockets``), so libzmq
    /// refuses a message at once (`EHOSTUNREACH`) for a connection that is closed or closing,
    /// and only then is the answer `false`.
    ///
    /// A connection whose queue is full is there (slow, not gone), and so is one the answer
    /// is unsure of (any other failure): a binding is only ever freed for a connection known
    /// to be gone.
    func stillConnects(_ identity: [UInt8], probe: [UInt8]) -> Bool {
        do {
            guard try send(identity, more: true, wait: false) else { return true }
            // libzmq takes the rest of a message whose first frame it took.
            _ = try send(probe, wait: false)
            return true
        } catch {
            return error != .hostUnreachable
        }
    }

    /// The probe ``stillConnects(_:probe:)`` sends: a pong with request id 0 (answering no
    /// request) in protocol version 1, which every client reads, carrying the serving
    /// party's epoch, so that no client takes it for a restart.
    static func stillConnectsProbe(epoch: UInt64) -> [UInt8] {
        (try? HostReply.pong(epoch: epoch).encoded(version: StateBusProtocol.version1, requestID: 0)) ?? []
    }
}
