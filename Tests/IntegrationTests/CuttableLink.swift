import Foundation
import StateBusRuntime
import Synchronization

/// A TCP forwarder on loopback that a test can cut, as a network partition cuts a link: a
/// host given its port instead of etcd's reaches etcd through it until ``cut()``; then every
/// connection through it is closed and new ones are closed at once, until ``restore()``.
final class CuttableLink: Sendable {
    /// The port it listens on (127.0.0.1).
    let port: Int
    private let listener: Int32
    private let target: Int
    private let state = Locked<(cut: Bool, open: [Int32], stopped: Bool)>((false, [], false))

    /// Listens on a free loopback port and forwards to `targetPort` on loopback.
    init(to targetPort: Int) throws {
        target = targetPort
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw CuttableLinkError("socket() failed: errno \(errno)") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 64) == 0 else { throw CuttableLinkError("bind/listen failed: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        listener = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Closes every connection through the link and refuses new ones.
    func cut() {
        let open = state.withLock { state in
            state.cut = true
            defer { state.open = [] }
            return state.open
        }
        for descriptor in open { shutdown(descriptor, Int32(SHUT_RDWR)) }
    }

    /// Lets connections through again.
    func restore() { state.withLock { $0.cut = false } }

    /// Stops listening and closes everything.
    func stop() {
        cut()
        state.withLock { $0.stopped = true }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if state.withLock({ $0.stopped }) { return }
                continue
            }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: target)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            let admitted = state.withLock { state -> Bool in
                guard !state.cut, connected == 0 else { return false }
                state.open += [client, upstream]
                return true
            }
            guard admitted else {
                close(client)
                close(upstream)
                continue
            }
            let pair = Pair(client, upstream)
            Thread.detachNewThread { Self.pump(from: client, to: upstream, pair: pair) }
            Thread.detachNewThread { Self.pump(from: upstream, to: client, pair: pair) }
        }
    }

    /// A connection's two sockets, closed by the second of its two pumps to end.
    private final class Pair: Sendable {
        let sockets: (Int32, Int32)
        let ended = Atomic<Int>(0)
        init(_ first: Int32, _ second: Int32) { sockets = (first, second) }
        func pumpEnded() {
            guard ended.add(1, ordering: .acquiringAndReleasing).newValue == 2 else { return }
            close(sockets.0)
            close(sockets.1)
        }
    }

    /// Copies bytes one way until either side ends, then ends both.
    private static func pump(from source: Int32, to destination: Int32, pair: Pair) {
        defer { pair.pumpEnded() }
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes { write(destination, $0.baseAddress! + sent, count - sent) }
                guard written > 0 else { break }
                sent += written
            }
            guard sent == count else { break }
        }
        shutdown(source, Int32(SHUT_RDWR))
        shutdown(destination, Int32(SHUT_RDWR))
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return address
    }
}

/// A link that could not be set up.
struct CuttableLinkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
