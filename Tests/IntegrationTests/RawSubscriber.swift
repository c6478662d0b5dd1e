import Foundation
import StateBusRuntime

/// A SUB peer spoken by hand (ZMTP 3.0 over a Unix socket), for subscription floods: unlike
/// a libzmq XSUB it keeps no copy of what it subscribes, and it can announce a frame of any
/// size and stream it, so a test sends 100 MB without holding 100 MB.
final class RawSubscriber {
    private let descriptor: Int32
    /// The `errno` of the last failed send, for failure messages.
    private(set) var lastError: Int32 = 0

    /// Connects to an `ipc://` endpoint and greets it as a SUB socket.
    init(ipcEndpoint: String) throws {
        let path = String(ipcEndpoint.dropFirst("ipc://".count))
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw RawSubscriberError("socket() failed: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw RawSubscriberError("ipc path too long: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: bytes + [0]) }
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            throw RawSubscriberError("connect(\(path)) failed: errno \(errno)")
        }
        // Greeting: signature, version 3.0, mechanism NULL, as-server 0, filler.
        var greeting: [UInt8] = [0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0x7F, 3, 0]
        greeting += Array("NULL".utf8) + [UInt8](repeating: 0, count: 16)
        greeting += [UInt8](repeating: 0, count: 32)
        // READY command with Socket-Type SUB.
        let ready: [UInt8] = [5] + Array("READY".utf8) + [11] + Array("Socket-Type".utf8) + [0, 0, 0, 3] + Array("SUB".utf8)
        guard write(greeting + [0x04, UInt8(ready.count)] + ready) else {
            throw RawSubscriberError("the host closed the connection during the greeting")
        }
        // As libzmq's own peers do, send nothing more before the host's greeting and READY
        // (whose Socket-Type is XPUB) arrived: libzmq 4.3.4 with ZMQ_MAXMSGSIZE set closes a
        // connection whose first message arrives in the same read as the greeting.
        guard waitForBytes(Array("XPUB".utf8), timeout: .seconds(20)) else { throw RawSubscriberError("no greeting from the host at \(path)") }
    }

    deinit { close(descriptor) }

    /// Sends one subscription frame (0x01 + topic).
    /// - Returns: `false` when the peer has closed the connection.
    @discardableResult
    func subscribe(_ topic: [UInt8]) -> Bool {
        let body: [UInt8] = [1] + topic
        return write(header(size: body.count) + body)
    }

    /// Announces a subscription frame of `size` bytes and streams it in 1 MiB pieces until
    /// sent or refused.
    /// - Returns: the bytes of the body written before the peer closed the connection.
    func streamSubscription(size: Int) -> Int {
        guard write(header(size: size) + [1]) else { return 0 }
        let piece = [UInt8](repeating: 0x41, count: 1 << 20)
        var sent = 1
        while sent < size {
            let count = min(piece.count, size - sent)
            guard write(Array(piece[0..<count])) else { return sent }
            sent += count
        }
        return sent
    }

    /// Whether the peer has closed the connection (waits up to `timeout` for it to say so).
    func isClosedByPeer(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) { return true }
        }
        return false
    }

    /// Reads what the host sends until `needle` appears in it (a join marker names its view
    /// id), or `timeout` passes.
    func waitForBytes(_ needle: [UInt8], timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            // Interrupted (a child process of the test exiting sends SIGCHLD): read again.
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count > 0 else { return false }
            received += buffer[0..<count]
            if received.count >= needle.count,
                (0...(received.count - needle.count)).contains(where: { received[$0..<($0 + needle.count)].elementsEqual(needle) })
            {
                return true
            }
        }
        return false
    }

    private func header(size: Int) -> [UInt8] {
        if size <= 255 { return [0x00, UInt8(size)] }
        return [0x02] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(size) >> (8 * $0)) }
    }

    private func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                lastError = errno
                return false
            }
            offset += written
        }
        return true
    }
}

/// Why a raw subscriber could not connect.
struct RawSubscriberError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension ProcessMemory {
    /// `VmRSS` of process `pid` in MiB, or `nil` when the process is gone.
    static func residentMiB(_ pid: Int32) -> Double? { read(pid: "\(pid)").map { Double($0.residentBytes) / 1_048_576 } }
    /// `VmHWM` (peak resident) of process `pid` in MiB, or `nil` when the process is gone.
    static func peakMiB(_ pid: Int32) -> Double? { read(pid: "\(pid)").map { Double($0.peakBytes) / 1_048_576 } }
}
