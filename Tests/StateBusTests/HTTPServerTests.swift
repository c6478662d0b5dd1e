import Foundation
import StateBusHTTP
import StateBusRuntime
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `HTTPServer` in this process, through plain TCP connections: how many event streams it
/// keeps open, and its stop.
@Suite("HTTPServer: event streams and stop")
struct HTTPServerTests {
    /// A TCP connection to the server that sends one request and reads what comes back.
    final class Connection {
        let descriptor: Int32

        init(port: Int) throws {
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            // A reply never comes later than this: a read that would wait longer fails the test.
            var timeout = timeval(tv_sec: 20, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { throw HTTPListenAddress.Error("cannot connect: \(String(cString: strerror(errno)))") }
        }

        deinit { close(descriptor) }

        func send(_ request: String) {
            _ = Array(request.utf8).withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, 0) }
        }

        /// What arrives next (up to 4 KiB), or "" at the end of the connection.
        func read() -> String {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : ""
        }

        /// Reads until `text` has arrived; "" when the connection ended first.
        func read(until text: String) -> String {
            var seen = ""
            while !seen.contains(text) {
                let more = read()
                if more.isEmpty { return "" }
                seen += more
            }
            return seen
        }
    }

    static func server(connections: UInt32) throws -> HTTPServer {
        var limits = HTTPServer.Limits()
        limits.connections = connections
        return try HTTPServer(address: HTTPListenAddress(parsing: "127.0.0.1:0"), purpose: "test", limits: limits) { request in
            if request.bodyExceededLimit { return .bodyTooLarge(limit: 0) }
            guard request.path == "/events" else { return .text(404, "no") }
            let stream = HTTPEventStream()
            stream.send("hello")
            return HTTPResponse(events: stream)
        }
    }

    @Test("event streams take at most half the connections: one more is refused with 503 until one closes")
    func streamLimit() throws {
        let server = try Self.server(connections: 4)
        defer { server.stop() }
        var open: [Connection] = []
        for _ in 0..<2 {
            let connection = try Connection(port: server.port)
            connection.send("GET /events HTTP/1.1\r\nHost: test\r\n\r\n")
            #expect(connection.read(until: "data: hello").contains("200 OK"))
            open.append(connection)
        }
        let third = try Connection(port: server.port)
        third.send("GET /events HTTP/1.1\r\nHost: test\r\n\r\n")
        let refused = third.read(until: "close a page")
        #expect(refused.contains("503"), "\(refused)")
        #expect(refused.contains("2 event streams are open already"), "\(refused)")
    }

    @Test("a body declared far larger than the server reads is answered at once, before it is sent")
    func earlyAnswer() throws {
        let server = try Self.server(connections: 8)
        defer { server.stop() }
        let connection = try Connection(port: server.port)
        connection.send("POST /upload HTTP/1.1\r\nHost: test\r\nContent-Length: 100000000\r\n\r\n")
        let answer = connection.read(until: "bytes this server reads")
        #expect(answer.contains("413"), "\(answer)")
    }

    @Test("stop ends the open event streams, and a second stop does nothing")
    func stopEndsStreams() throws {
        let server = try Self.server(connections: 8)
        let connection = try Connection(port: server.port)
        connection.send("GET /events HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(connection.read(until: "data: hello").contains("200 OK"))
        server.stop()
        server.stop()
        // The rest of the chunked response, then the end of the connection.
        var rest = ""
        while case let more = connection.read(), !more.isEmpty { rest += more }
        #expect(!rest.contains("data:"), "nothing more was sent: \(rest)")
    }
}
