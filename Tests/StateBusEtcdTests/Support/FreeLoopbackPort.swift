#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// TCP ports on 127.0.0.1 that were free a moment ago: the kernel picks each for a socket
/// bound to port 0, and the sockets are closed again once all are picked (so the ports are
/// distinct). Another process may take one before the caller binds it, so the caller must be
/// ready to retry with new ones.
/// - Parameter count: how many ports.
/// - Throws: ``EtcdTestServer/StartError`` naming the call that failed, with `errno`.
func pickFreeLoopbackPorts(_ count: Int) throws -> [Int] {
    var descriptors: [Int32] = []
    defer { for descriptor in descriptors { close(descriptor) } }
    var ports: [Int] = []
    for _ in 0..<count {
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw EtcdTestServer.StartError(description: "socket() failed to pick a port: errno \(errno)") }
        descriptors.append(descriptor)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else { throw EtcdTestServer.StartError(description: "bind() to 127.0.0.1:0 failed: errno \(errno)") }
        var boundAddress = sockaddr_in()
        var boundLength = length
        let named = withUnsafeMutablePointer(to: &boundAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &boundLength) }
        }
        guard named == 0 else { throw EtcdTestServer.StartError(description: "getsockname() failed: errno \(errno)") }
        ports.append(Int(UInt16(bigEndian: boundAddress.sin_port)))
    }
    return ports
}
