import CMicroHTTPD
import StateBusRuntime

#if canImport(Glibc)
    import Glibc
#endif

/// The HTTP side of ``MetricsEndpoint``: libmicrohttpd serving `GET /metrics` (and `HEAD`)
/// from a thread of its own, on a socket this type binds, so that a port in use or an
/// address that is not this machine's is reported in the system's words.
///
/// Bounded: at most ``connectionLimit`` connections at once, each closed after
/// ``idleTimeoutSeconds`` without traffic and given at most ``connectionMemoryBytes`` for
/// its request. Anything but `GET` or `HEAD` of `/metrics` gets an error status and a line
/// saying what this server serves.
final class MetricsHTTPServer {
    /// Connections served at once; more wait in the kernel's backlog.
    static let connectionLimit: UInt32 = 64
    /// A connection silent this long is closed (a scraper that stalls holds nothing for long).
    static let idleTimeoutSeconds: UInt32 = 10
    /// What one connection may hold of its request (its headers); a larger request is refused.
    static let connectionMemoryBytes = 32 * 1024

    /// The port the server listens on (the one chosen, for port 0).
    let port: Int
    private let daemon: OpaquePointer
    private let responder: Unmanaged<MetricsResponder>

    /// Binds `address` and starts serving.
    /// - Parameters:
    ///   - address: `HOST:PORT`; a host name is resolved, port 0 picks a free port.
    ///   - body: the metrics text, made anew for each request (on the server's thread).
    /// - Throws: ``HTTPListenAddress/Error`` saying why it cannot listen.
    init(address: HTTPListenAddress, body: @escaping @Sendable () -> [UInt8]) throws {
        let socket = try Self.listen(on: address)
        // libmicrohttpd gets a copy of the descriptor: when it fails to start, it closes the
        // socket it was given on some paths and not on others, so the copy is left to it and
        // only the original is closed here, once.
        let copy = dup(socket.descriptor)
        close(socket.descriptor)
        guard copy >= 0 else {
            throw HTTPListenAddress.Error("cannot serve metrics at \(address): \(String(cString: strerror(errno)))")
        }
        let responder = Unmanaged.passRetained(MetricsResponder(body: body))
        guard
            let daemon = cmhd_start(
                copy, Self.handleRequest, responder.toOpaque(), Self.connectionLimit, Self.idleTimeoutSeconds, Self.connectionMemoryBytes)
        else {
            responder.release()
            throw HTTPListenAddress.Error("cannot serve metrics at \(address): libmicrohttpd did not start its server")
        }
        self.daemon = daemon
        self.responder = responder
        self.port = socket.port
    }

    /// Stops serving: the listening socket closes and the server's thread ends (requests in
    /// progress are cut off). Call once.
    func stop() {
        // The socket is handed back first, so that it is closed here, once, after the thread
        // that used it has ended.
        let socket = MHD_quiesce_daemon(daemon)
        MHD_stop_daemon(daemon)
        if socket >= 0 { close(socket) }
        responder.release()
    }

    /// A bound, listening TCP socket for `address`.
    private static func listen(on address: HTTPListenAddress) throws -> (descriptor: Int32, port: Int) {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let lookup = getaddrinfo(address.host, String(address.port), &hints, &found)
        guard lookup == 0, let first = found else {
            throw HTTPListenAddress.Error(
                "cannot serve metrics at \(address): \(String(cString: gai_strerror(lookup))) (give a host name or address of this machine)")
        }
        defer { freeaddrinfo(first) }
        var failure = "no address to listen on"
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let entry = candidate {
            candidate = entry.pointee.ai_next
            let descriptor = socket(entry.pointee.ai_family, entry.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), entry.pointee.ai_protocol)
            guard descriptor >= 0 else {
                failure = String(cString: strerror(errno))
                continue
            }
            var on: Int32 = 1
            _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
            if bind(descriptor, entry.pointee.ai_addr, entry.pointee.ai_addrlen) == 0, Glibc.listen(descriptor, 64) == 0,
                let port = boundPort(of: descriptor)
            {
                return (descriptor, port)
            }
            failure = String(cString: strerror(errno))
            close(descriptor)
        }
        throw HTTPListenAddress.Error("cannot serve metrics at \(address): \(failure)")
    }

    /// The local port of a bound socket.
    private static func boundPort(of descriptor: Int32) -> Int? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { return nil }
        let family = Int32(storage.ss_family)
        return withUnsafePointer(to: &storage) { pointer -> Int? in
            switch family {
            case AF_INET: pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            case AF_INET6: pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            default: nil
            }
        }
    }

    /// MHD_RESPMEM_MUST_COPY: libmicrohttpd copies the body, which lives only for the call.
    private static let copyMode = MHD_ResponseMemoryMode(rawValue: 2)!

    /// libmicrohttpd's request callback, on the server's thread: answers at once, before any
    /// request body is read (this server takes none).
    private static let handleRequest: MHD_AccessHandlerCallback = { context, connection, url, method, _, _, _, _ in
        guard let context, let connection, let url, let method else { return .NO }
        let responder = Unmanaged<MetricsResponder>.fromOpaque(context).takeUnretainedValue()
        let answer = responder.answer(path: String(cString: url), method: String(cString: method))
        let response = answer.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), MetricsHTTPServer.copyMode)
        }
        guard let response else { return .NO }
        defer { MHD_destroy_response(response) }
        for (name, value) in answer.headers { _ = MHD_add_response_header(response, name, value) }
        return MHD_queue_response(connection, UInt32(answer.status), response)
    }
}
