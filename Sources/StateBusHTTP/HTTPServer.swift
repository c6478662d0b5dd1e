import CMicroHTTPD
import StateBusRuntime

#if canImport(Glibc)
    import Glibc
#endif

/// A small HTTP/1.1 server on libmicrohttpd, a C library Debian has (`libmicrohttpd-dev`), so
/// that the metrics endpoint and the inspector compile no web framework.
///
/// It serves a socket it binds itself, so that a port in use or an address that is not this
/// machine's is reported in the system's words. Each connection has a thread of its own,
/// where the handler runs: a handler may wait (bounded by its own deadline), and an event
/// stream's connection waits for its next event there.
///
/// Bounded: at most ``Limits/connections`` connections at once (more wait in the kernel's
/// backlog), each closed after ``Limits/idleSeconds`` without traffic, given at most
/// ``Limits/requestMemoryBytes`` for its request's headers and ``Limits/bodyBytes`` for its
/// body: a larger body is not kept, and the handler is told (``HTTPRequest/bodyExceededLimit``);
/// one declared sixteen times larger (and at least 64 KiB) is answered before it is read.
public final class HTTPServer: Sendable {
    /// The server's bounds.
    public struct Limits: Sendable {
        /// Connections served at once; event streams may take half of them.
        public var connections: UInt32 = 64
        /// A connection silent this long is closed.
        public var idleSeconds: UInt32 = 10
        /// What one connection may hold of its request's headers.
        public var requestMemoryBytes = 32 * 1024
        /// The largest request body kept; past it the handler gets none, and is told.
        public var bodyBytes = 0

        /// The defaults: 64 connections, 10 s idle, 32 KiB of headers, no body.
        public init() {}
    }

    /// Answers a request, on its connection's thread.
    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    /// The port the server listens on (the one chosen, for port 0).
    public let port: Int
    // Sendable: the daemon pointer is used by `stop()` only, once (`stopped` lets the first
    // call through); libmicrohttpd's own threads use the context, which is Sendable.
    private nonisolated(unsafe) let daemon: OpaquePointer
    private let context: Unmanaged<HTTPServerContext>
    private let stopped = Locked(false)

    /// Binds `address` and starts serving.
    /// - Parameters:
    ///   - address: `HOST:PORT`; a host name is resolved, port 0 picks a free port.
    ///   - purpose: what the server is for, in its errors ("serve metrics").
    ///   - limits: the server's bounds.
    ///   - handler: answers each request.
    /// - Throws: ``HTTPListenAddress/Error`` saying why it cannot listen.
    public init(address: HTTPListenAddress, purpose: String, limits: Limits = Limits(), handler: @escaping Handler) throws {
        let socket = try ListeningSocket(address: address, purpose: purpose)
        // libmicrohttpd gets a copy of the descriptor: when it fails to start, it closes the
        // socket it was given on some paths and not on others, so the copy is left to it and
        // only the original is closed here, once.
        let copy = fcntl(socket.descriptor, F_DUPFD_CLOEXEC, 0)
        close(socket.descriptor)
        guard copy >= 0 else {
            throw HTTPListenAddress.Error("cannot \(purpose) at \(address): \(String(cString: strerror(errno)))")
        }
        let context = Unmanaged.passRetained(
            HTTPServerContext(handler: handler, bodyLimit: limits.bodyBytes, streamLimit: max(1, Int(limits.connections) / 2)))
        guard
            let daemon = cmhd_start(
                copy, HTTPServerContext.handleRequest, context.toOpaque(), HTTPServerContext.requestCompleted, limits.connections,
                limits.idleSeconds, limits.requestMemoryBytes)
        else {
            context.release()
            throw HTTPListenAddress.Error("cannot \(purpose) at \(address): libmicrohttpd did not start its server")
        }
        self.daemon = daemon
        self.context = context
        self.port = socket.port
    }

    /// Stops serving: the listening socket closes, every event stream ends, and the server's
    /// threads end (requests in progress are cut off). Later calls do nothing.
    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        // The socket is handed back first, so that it is closed here, once, after the thread
        // that used it has ended; event streams end before, so that no connection's thread
        // waits for its next event while the daemon waits for it.
        let socket = MHD_quiesce_daemon(daemon)
        context.takeUnretainedValue().closeStreams()
        MHD_stop_daemon(daemon)
        if socket >= 0 { close(socket) }
        context.release()
    }
}
