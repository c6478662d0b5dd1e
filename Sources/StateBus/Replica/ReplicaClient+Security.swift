import ZeroMQ

extension ReplicaClient {
    /// Makes a socket a CURVE client of the host, when the configuration has keys.
    func secure(_ socket: Socket) throws {
        guard let security = configuration.security else { return }
        try socket.makeCurveClient(keys: security.keys, serverKey: security.hostPublicKey)
    }

    /// Watches the control socket's handshakes, so a refused key, a wrong host key or a
    /// missing one becomes an error the view's code sees (``Replica/lastError``) instead of
    /// a join that never ends: libzmq retries such a connection in silence.
    ///
    /// Also tells when the connection comes back after a drop, so that a request it may
    /// have lost is asked again at once (``controlConnectionCameBack()``).
    ///
    /// Only where a secure handshake can fail: with keys, or over tcp (a host across the
    /// network may demand keys); and in a high-availability group, whose standby binds its
    /// endpoint anew when it takes the lead. A monitor costs two sockets of the context's
    /// 1,023, and replicas sharing a loop share a context.
    func watchHandshakes(of socket: Socket) {
        guard configuration.security != nil || controlEndpoint.hasPrefix("tcp://") || endpoints.hasAlternatives else { return }
        do {
            try sockets.watchHandshakes(of: socket, on: thread) { [unowned self] in self.handshakeEventsReadable() }
        } catch {
            // Only the quality of the error message, and how soon a lost hello is said
            // again, depend on it.
            configuration.logger.debug("no handshake monitor on the control socket: \(error)")
        }
    }

    private func handshakeEventsReadable() {
        let (events, cameBack) = sockets.takeHandshakeEvents()
        for event in events {
            if event.isHandshakeSucceeded {
                // A key listed since, or a host restarted mid-handshake: the cause is gone.
                shared.inner.withLock { inner in
                    if let code = inner.lastError?.code, code == .forbidden || code == .handshakeFailed { inner.lastError = nil }
                }
            } else if let error = handshakeError(event), shared.inner.withLock({ $0.lastError }) != error {
                // libzmq retries the connection every second or so: report each cause once.
                fail(error)
            }
        }
        if cameBack { controlConnectionCameBack() }
    }

    /// The error a handshake event means, or `nil` for one that is no error.
    func handshakeError(_ event: SocketEvent) -> StateBusError? {
        let host = controlEndpoint
        let keyed = configuration.security
        if event.isHandshakeFailedAuth {
            let key = keyed?.keys.publicKey ?? "(none)"
            return StateBusError(
                .forbidden,
                "the host at \(host) refused this view's key \(key) (ZAP status \(event.value)): it is not in the host's authorized keys file; ask its operator to add a line `read \(key) NAME` (or write)",
                object: object)
        }
        if event.isMechanismMismatch {
            return keyed == nil
                ? StateBusError(
                    .handshakeFailed,
                    "the host at \(host) requires CURVE keys: pass --key VIEW.key --host-key HOST.pub (ReplicaConfiguration.security); `statebus keygen NAME` makes a key pair",
                    object: object)
                : StateBusError(
                    .handshakeFailed,
                    "the host at \(host) does not use CURVE keys, but this view was given some: drop --key/--host-key, or give the host a key",
                    object: object)
        }
        if event.isHandshakeFailedProtocol {
            return StateBusError(
                .handshakeFailed, "the secure handshake with the host at \(host) failed (libzmq protocol error 0x\(String(event.value, radix: 16)))",
                object: object)
        }
        if event.isHandshakeFailedNoDetail, let keyed {
            return StateBusError(
                .handshakeFailed,
                "the host at \(host) closed the connection during the CURVE handshake: the host key given (\(keyed.hostPublicKey)) is probably not this host's public key; check --host-key",
                object: object)
        }
        return nil
    }
}
