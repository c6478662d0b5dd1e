import Foundation
import StateBusRuntime
import ZeroMQ

extension HostDescription {
    /// Waits until a host with keys answers on its control endpoint: a readiness check that
    /// needs no authorized key, for a launcher.
    ///
    /// It connects with a fresh key pair that the host has never listed. A host holding the
    /// secret half of `hostPublicKey` completes its side of the CURVE handshake and then its
    /// ZAP handler refuses the unknown key; that refusal is the answer. (A key the host
    /// does list would be admitted: that is an answer too.)
    /// - Parameters:
    ///   - controlEndpoint: the host's control endpoint.
    ///   - hostPublicKey: the host's Z85 public key.
    ///   - timeout: how long to wait.
    /// - Throws: `StateBusError.timeout` when no host with that key answered in time.
    public static func probeHandshake(controlEndpoint: String, hostPublicKey: String, timeout: Duration = .seconds(5)) async throws {
        // Blocking receives with a deadline, so on a thread of their own, off the pool.
        try await onThreadOfItsOwn { () throws in
            try awaitHandshake(controlEndpoint: controlEndpoint, hostPublicKey: hostPublicKey, timeout: timeout)
        }
    }

    private static func awaitHandshake(controlEndpoint: String, hostPublicKey: String, timeout: Duration) throws {
        let context = try Context()
        let dealer = try Socket(context: context, type: .dealer)
        try dealer.makeCurveClient(keys: try CurveKeyPair.generate(), serverKey: hostPublicKey)
        let monitor = try dealer.monitor(at: "inproc://statebus-readiness-probe", events: SocketEvent.handshakeEvents)
        defer {
            monitor.close()
            dealer.close()
        }
        try dealer.connect(controlEndpoint)
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var last: SocketEvent?
        while clock.now < deadline {
            let remaining = clock.now.duration(to: deadline)
            try monitor.set(
                .receiveTimeout,
                Int32(clamping: max(1, remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000)))
            guard let frames = try? monitor.receiveMultipart(), let event = SocketEvent(frames: frames.map(\.bytes)) else { break }
            if event.isHandshakeSucceeded || event.isHandshakeFailedAuth { return }
            last = event
        }
        let hint =
            last.map { $0.isHandshakeFailedNoDetail || $0.isCryptographic ? " (handshakes failed: is \(hostPublicKey) this host's public key?)" : "" }
            ?? ""
        throw StateBusError(.timeout, "no host with key \(hostPublicKey) answered at \(controlEndpoint) within \(timeout)\(hint)")
    }
}
