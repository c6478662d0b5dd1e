import Dispatch
import Testing

@testable import StateBusHTTP

/// `HTTPEventStream`, the server-sent events of the inspector's page: what a connection's
/// thread writes, its bound, and its keep-alive when nothing comes.
@Suite("HTTPEventStream: server-sent events, bounded")
struct HTTPEventStreamTests {
    /// What one read gives, as text, or `nil` at the stream's end.
    static func read(_ stream: HTTPEventStream, capacity: Int = 4096) -> String? {
        var buffer = [UInt8](repeating: 0, count: capacity)
        let count = buffer.withUnsafeMutableBytes { stream.read(into: $0) }
        return count.map { String(decoding: buffer[..<$0], as: UTF8.self) }
    }

    @Test("an event is a data line per line of its text and a blank line; after close, what was queued is still read, then the end")
    func eventsThenEnd() {
        let stream = HTTPEventStream()
        #expect(stream.send("{\"type\":\"state\"}"))
        #expect(stream.send("two\nlines"))
        stream.close()
        #expect(!stream.send("late"), "a closed stream takes nothing")
        #expect(Self.read(stream) == "data: {\"type\":\"state\"}\n\ndata: two\ndata: lines\n\n")
        #expect(Self.read(stream) == nil)
    }

    @Test("a read smaller than what waits takes it in pieces, in order")
    func piecewise() {
        let stream = HTTPEventStream()
        stream.send("abcdef")
        stream.close()
        var text = ""
        while let piece = Self.read(stream, capacity: 5) { text += piece }
        #expect(text == "data: abcdef\n\n")
    }

    @Test("an event that would pass the bound closes the stream instead of queuing more; what was queued is still read")
    func boundCloses() {
        let stream = HTTPEventStream(maximumBytes: 64)
        #expect(stream.send(String(repeating: "a", count: 40)))
        #expect(!stream.send(String(repeating: "b", count: 40)), "48 + 48 bytes would pass 64")
        #expect(stream.isClosed)
        #expect(Self.read(stream) == "data: " + String(repeating: "a", count: 40) + "\n\n")
        #expect(Self.read(stream) == nil)
    }

    @Test("a quiet stream writes a comment after its keep-alive interval; an event sent meanwhile ends the wait at once")
    func keepAliveAndWakeUp() async {
        let stream = HTTPEventStream()
        let started = ContinuousClock.now
        #expect(Self.read(stream) == ": still here\n\n")
        #expect(ContinuousClock.now - started >= HTTPEventStream.keepAliveInterval)
        // A reader waiting on another thread gets the event (past a keep-alive or two, if
        // this thread is held up that long on a busy machine).
        let piece = await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            DispatchQueue.global().async {
                var piece = Self.read(stream)
                for _ in 0..<30 where piece == ": still here\n\n" { piece = Self.read(stream) }
                continuation.resume(returning: piece)
            }
            stream.send("now")
        }
        #expect(piece == "data: now\n\n")
    }
}
