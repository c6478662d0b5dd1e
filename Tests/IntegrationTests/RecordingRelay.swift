import Foundation
import StateBusRuntime
import Synchronization

/// A TCP relay between a client and a server that records every byte it forwards, both
/// ways: what an eavesdropper on the network would see. It can also play a slow link, paced
/// towards the client.
///
/// It listens on `127.0.0.1` at a port the kernel picks; each accepted connection gets one
/// to the target, and a thread per direction copies bytes until either side closes.
final class RecordingRelay: Sendable {
    /// The endpoint clients connect to instead of the target.
    let endpoint: String
    private let listener: Int32
    private let recorded = Locked<[UInt8]>([])
    private let closed = Atomic<Bool>(false)
    /// The pace of the server-to-client direction, or `nil` for as fast as it comes.
    private let downstreamBytesPerSecond: Int?

    /// Starts relaying to `tcp://127.0.0.1:PORT`.
    /// - Parameter downstreamBytesPerSecond: paces what the server sends the client to about
    ///   this rate (a slow link); `nil` relays at full speed.
    init(to target: String, downstreamBytesPerSecond: Int? = nil) throws {
        self.downstreamBytesPerSecond = downstreamBytesPerSecond
        guard let port = target.split(separator: ":").last.flatMap({ UInt16($0) }) else { throw RelayError("no port in \(target)") }
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 16) == 0 else { throw RelayError("cannot listen: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        self.listener = listener
        endpoint = "tcp://127.0.0.1:\(UInt16(bigEndian: address.sin_port))"
        Thread.detachNewThread { [self] in acceptLoop(targetPort: port) }
    }

    /// Everything forwarded so far, both directions interleaved.
    var bytes: [UInt8] { recorded.withLock { $0 } }

    /// Whether the recording holds `text` as UTF-8.
    func contains(_ text: String) -> Bool {
        let needle = Array(text.utf8)
        let haystack = bytes
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { start in haystack[start..<(start + needle.count)].elementsEqual(needle) }
    }

    /// Stops accepting (connections already relayed end when a side closes).
    func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }

    deinit { close() }

    private func acceptLoop(targetPort: UInt16) {
        while !closed.load(ordering: .relaxed) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: targetPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                Glibc.close(client)
                Glibc.close(server)
                continue
            }
            Thread.detachNewThread { [self] in pump(from: client, to: server, bytesPerSecond: nil) }
            Thread.detachNewThread { [self] in pump(from: server, to: client, bytesPerSecond: downstreamBytesPerSecond) }
        }
    }

    private func pump(from source: Int32, to destination: Int32, bytesPerSecond: Int?) {
        // Paced, it moves 4 KiB at a time and waits as long as that takes at the rate.
        var buffer = [UInt8](repeating: 0, count: bytesPerSecond == nil ? 65536 : 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            if let bytesPerSecond { Thread.sleep(forTimeInterval: Double(count) / Double(bytesPerSecond)) }  // the rate simulated
            recorded.withLock { $0.append(contentsOf: buffer[0..<count]) }
            var sent = 0
            while sent < count {
                // MSG_NOSIGNAL: a peer that closed is an end of the relay, not a SIGPIPE that
                // ends the whole test process.
                let written = buffer.withUnsafeBytes { send(destination, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL)) }
                guard written > 0 else { break }
                sent += written
            }
        }
        // One side closed: shut both down, so the other pump ends too. The descriptors are
        // left open (a few per test): closing them here could close one the other pump
        // still reads, or one the process reused meanwhile.
        shutdown(source, Int32(SHUT_RDWR))
        shutdown(destination, Int32(SHUT_RDWR))
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

struct RelayError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
