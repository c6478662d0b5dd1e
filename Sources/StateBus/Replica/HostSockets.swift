import ZeroMQ

/// A follower's sockets towards a host (a view's, or a relay's towards its upstream): the
/// control DEALER, the updates SUB, and the monitor of the DEALER's handshakes where a view
/// watches them. Registered on the follower's loop; closed together.
struct HostSockets {
    /// The control connection: requests and their answers.
    var control: Socket?
    /// The updates connection: runs, heartbeats, join markers.
    var updates: Socket?
    /// The monitor of the control socket's handshakes.
    var handshakeMonitor: Socket?

    /// Unregisters every socket from `thread` and closes it.
    mutating func close(on thread: LoopThread) {
        for socket in [handshakeMonitor, control, updates] {
            guard let socket else { continue }
            thread.unregister(socket)
            socket.close()
        }
        self = HostSockets()
    }
}
