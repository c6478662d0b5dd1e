import StateBusRuntime

#if canImport(Glibc)
    import Glibc
#endif

/// A bound, listening TCP socket for an ``HTTPListenAddress``: the first of its resolved
/// addresses that binds, or the system's reason why none did.
struct ListeningSocket {
    let descriptor: Int32
    let port: Int

    /// Resolves `address`, then binds and listens on the first address that takes it.
    /// - Parameter purpose: what the server is for, in the error ("serve metrics").
    init(address: HTTPListenAddress, purpose: String) throws {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let lookup = getaddrinfo(address.host, String(address.port), &hints, &found)
        guard lookup == 0, let first = found else {
            throw HTTPListenAddress.Error(
                "cannot \(purpose) at \(address): \(String(cString: gai_strerror(lookup))) (give a host name or address of this machine)")
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
                let port = Self.boundPort(of: descriptor)
            {
                self.descriptor = descriptor
                self.port = port
                return
            }
            failure = String(cString: strerror(errno))
            close(descriptor)
        }
        throw HTTPListenAddress.Error("cannot \(purpose) at \(address): \(failure)")
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
}
