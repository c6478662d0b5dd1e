import CZeroMQ
import StateBusRuntime

/// An XSUB→XPUB forwarder (the ZeroMQ Guide's "espresso" proxy) on a thread of its own:
/// publishers connect to its subscriber-facing side, subscribers to its publisher-facing
/// side, and subscriptions flow upstream so publishers filter at the source.
///
/// Use one to fan a host's updates out to many views or across machines.
///
/// ```swift
/// let forwarder = try Forwarder(context: context,
///                               publishersConnectTo: "tcp://0.0.0.0:*",
///                               subscribersConnectTo: "ipc:///run/statebus/fanout")
/// print(forwarder.frontendEndpoint, forwarder.backendEndpoint)
/// forwarder.stop()
/// ```
public final class Forwarder: Sendable {
    /// The resolved endpoint the XSUB side is bound to; publishers connect here.
    public let frontendEndpoint: String
    /// The resolved endpoint the XPUB side is bound to; subscribers connect here.
    public let backendEndpoint: String

    private let context: Context
    private let controlEndpoint: String
    private let thread: Locked<JoinableThread?>

    /// Binds both sides and starts forwarding.
    /// - Parameters:
    ///   - context: the context to make sockets in.
    ///   - publishersConnectTo: the XSUB endpoint to bind.
    ///   - subscribersConnectTo: the XPUB endpoint to bind.
    /// - Throws: `ZeroMQError` when a bind fails; nothing is left running then.
    public init(context: Context, publishersConnectTo: String, subscribersConnectTo: String) throws {
        self.context = context
        let control = "inproc://statebus-forwarder-\(UInt64.random(in: 0...UInt64.max))"
        controlEndpoint = control
        // Bind on the caller's thread so errors surface here, then hand the sockets over to
        // the proxy thread. libzmq allows moving a socket to another thread with a full
        // memory barrier, which starting a thread provides.
        let frontend = try Socket(context: context, type: .xsub)
        let backend = try Socket(context: context, type: .xpub)
        let controlSocket = try Socket(context: context, type: .pair)
        frontendEndpoint = try frontend.bind(publishersConnectTo)
        backendEndpoint = try backend.bind(subscribersConnectTo)
        try controlSocket.bind(control)
        let sockets = SocketHandOff(frontend: frontend, backend: backend, control: controlSocket)
        thread = Locked(
            JoinableThread(name: "zmq-forwarder") {
                sockets.run()
            })
    }

    /// Stops forwarding, closes both sides and waits for the thread to end. Idempotent.
    public func stop() {
        let running = thread.withLock { current -> JoinableThread? in
            defer { current = nil }
            return current
        }
        guard let running else { return }
        // The proxy ends on a TERMINATE command, or when the context ends (ETERM). A blocking
        // send to a PAIR connected in-process is delivered or throws; only then is the join
        // sure to return. Otherwise the thread ends with the context, and is not waited for.
        // The stopper closes after the join: closed earlier, it could take the command with it.
        var stopper: Socket?
        defer { stopper?.close() }
        var ending = false
        do {
            stopper = try Socket(context: context, type: .pair)
            try stopper?.connect(controlEndpoint)
            ending = try stopper?.send("TERMINATE") ?? false
        } catch {
            ending = error.code == ETERM
        }
        if ending { running.join() }
    }

    deinit { stop() }
}

/// Moves the forwarder's three sockets to the proxy thread.
private final class SocketHandOff: @unchecked Sendable {
    // Why `@unchecked Sendable` is sound: the sockets are created and bound on the caller's
    // thread, which never touches them again after handing this box to the new thread
    // (thread creation is a full memory barrier); from then on only the proxy thread uses
    // and closes them.
    let frontend: Socket
    let backend: Socket
    let control: Socket

    init(frontend: Socket, backend: Socket, control: Socket) {
        self.frontend = frontend
        self.backend = backend
        self.control = control
    }

    func run() {
        if let front = frontend.handle, let back = backend.handle, let ctl = control.handle {
            _ = zmq_proxy_steerable(front, back, nil, ctl)
        }
        frontend.close()
        backend.close()
        control.close()
    }
}
