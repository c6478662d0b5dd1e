import Foundation

// A hello's admission, the same at a host and at a relay: PROTOCOL.md section 5.

extension ClientTable {
    /// Checks a hello and binds its view id to the connection.
    /// - Parameters:
    ///   - hello: the hello.
    ///   - identity: its connection's routing id.
    ///   - maxSubscriptionBytes: the updates socket's subscription frame limit: the view's
    ///     join subscription carries its id, so a longer id could never join.
    ///   - speaker: "host" or "relay", in the refusals' words.
    ///   - isConnected: whether a connection is still there (``Socket/stillConnects(_:epoch:)``),
    ///     asked of the connection that holds the view id before the hello is refused: a
    ///     holder that closed its connection without a goodbye (a view that crashed, or that
    ///     closed a connection before it read the welcome) frees the id at once, instead of
    ///     after the lease.
    /// - Returns: the session token to welcome it with (empty for a hello without a view id),
    ///   or why it is refused (`badRequest`, `viewIDInUse`).
    mutating func admit(
        _ hello: FollowerRequest.Hello, from identity: [UInt8], maxSubscriptionBytes: Int, speaker: String,
        isConnected: (_ identity: [UInt8]) -> Bool
    ) -> Result<[UInt8], StateBusError> {
        let longestViewID = maxSubscriptionBytes - 4
        guard hello.viewID.utf8.count <= longestViewID else {
            return .failure(
                StateBusError(
                    .badRequest,
                    "the view id has \(hello.viewID.utf8.count) bytes; this \(speaker) takes at most \(longestViewID) (HostLimits.maxSubscriptionBytes - 4): use a shorter id, such as a UUID"
                ))
        }
        if hello.relay, hello.viewID.isEmpty {
            return .failure(StateBusError(.badRequest, "a relay's hello needs a view id of its own"))
        }
        guard !hello.viewID.isEmpty else { return .success([]) }
        let shown = Array(hello.sessionToken)
        var outcome = self.hello(viewID: hello.viewID, from: identity, token: shown)
        if outcome == .inUse, let holder = holder(of: hello.viewID), !isConnected(holder) {
            drop(holder)
            outcome = self.hello(viewID: hello.viewID, from: identity, token: shown)
        }
        switch outcome {
        case .bound(let token):
            if hello.relay { markRelay(identity) }
            describe(identity, nodeName: hello.nodeName)
            return .success(token)
        case .inUse:
            return .failure(
                StateBusError(
                    .viewIDInUse,
                    "view id '\(hello.viewID)' belongs to another live connection; give each replica its own id (ReplicaConfiguration.viewID), or wait \(lease) after the other stopped"
                ))
        }
    }
}
