import Synchronization
import ZeroMQ

/// Monitor endpoints must be unique in a context; followers may share one (a shared loop).
private let nextMonitorNumber = Atomic<Int>(0)

/// A follower's sockets towards a host (a view's, or a relay's towards its upstream): the
/// control DEALER, the updates SUB, and the monitor of the DEALER's handshakes where the
/// follower watches them. Registered on the follower's loop; closed together.
struct HostSockets {
    /// The control connection: requests and their answers.
    var control: Socket?
    /// The updates connection: runs, heartbeats, join markers.
    var updates: Socket?
    /// The monitor of the control socket's handshakes.
    var handshakeMonitor: Socket?
    /// Handshakes the monitored control socket completed: each after the first is its
    /// connection coming back after a drop.
    private var controlHandshakes = 0

    /// Watches the handshakes of `control` (the control socket, before it connects) with a
    /// monitor registered on `thread`: `readable` runs when events wait
    /// (``takeHandshakeEvents()``). A monitor costs two sockets of the context's 1,023, and
    /// followers sharing a loop share a context.
    mutating func watchHandshakes(of control: Socket, on thread: LoopThread, readable: @escaping () -> Void) throws(ZeroMQError) {
        let number = nextMonitorNumber.add(1, ordering: .relaxed).newValue
        let monitor = try control.monitor(at: "inproc://statebus-handshakes-\(number)", events: SocketEvent.handshakeEvents)
        thread.register(monitor, onReadable: readable)
        handshakeMonitor = monitor
    }

    /// The handshake events waiting on the monitor, at most 64 a call (libzmq retries a
    /// refused connection every second or so, so more wait rarely), and whether the control
    /// connection came back after a drop among them: a hello or snapshot request sent on
    /// the dropped connection may have been lost with it.
    mutating func takeHandshakeEvents() -> (events: [SocketEvent], connectionCameBack: Bool) {
        guard let handshakeMonitor else { return ([], false) }
        var events: [SocketEvent] = []
        var cameBack = false
        for _ in 0..<64 {
            guard let frames = try? handshakeMonitor.tryReceiveMultipart() else { break }
            guard let event = SocketEvent(frames: frames.map(\.bytes)) else { continue }
            if event.isHandshakeSucceeded {
                controlHandshakes += 1
                cameBack = cameBack || controlHandshakes > 1
            }
            events.append(event)
        }
        return (events, cameBack)
    }

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
