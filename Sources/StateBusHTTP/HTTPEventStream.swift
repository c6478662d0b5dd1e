import StateBusRuntime

/// Server-sent events to one client (`text/event-stream`): the producer queues events with
/// ``send(_:)`` from any thread; the server's thread for that connection writes them as
/// they come, and a comment line when none came for a second, so a client that went away
/// is noticed within a second and the connection never looks idle.
///
/// Bounded: at most ``maximumBytes`` wait to be written. A client that reads slower than its
/// events come would hold more; its stream is closed instead, and it connects again (a
/// browser's `EventSource` does so by itself) and is sent the state afresh. Closed by
/// either side: ``close()``, or the server when the client goes or the server stops.
public final class HTTPEventStream: Sendable {
    private struct State {
        var pending: [UInt8] = []
        /// How much of `pending` is written already.
        var written = 0
        var closed = false
    }

    /// The most bytes waiting to be written.
    public let maximumBytes: Int
    private let state = Locked(State())

    /// The comment written when no event came for ``keepAliveInterval``.
    static let keepAlive = Array(": still here\n\n".utf8)
    /// How long the connection's thread waits for an event before it writes ``keepAlive``.
    static let keepAliveInterval: Duration = .seconds(1)

    /// An open stream.
    /// - Parameter maximumBytes: the bound on what waits to be written (default 1 MiB).
    public init(maximumBytes: Int = 1 << 20) {
        self.maximumBytes = maximumBytes
    }

    /// Whether the stream has ended (the client went, the server stopped, the bound was
    /// passed, or ``close()``): the producer stops.
    public var isClosed: Bool { state.withLock { $0.closed } }

    /// Queues one event whose data is `text` (each of its lines a `data:` line).
    /// - Returns: `false` when the stream is closed, or was closed now because the event
    ///   would pass ``maximumBytes``.
    @discardableResult
    public func send(_ text: String) -> Bool {
        var event: [UInt8] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            event += Array("data: ".utf8) + Array(line.utf8) + [UInt8(ascii: "\n")]
        }
        event.append(UInt8(ascii: "\n"))
        let queued = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            guard state.pending.count - state.written + event.count <= maximumBytes else {
                state.closed = true
                return false
            }
            if state.written > 0 {
                state.pending.removeFirst(state.written)
                state.written = 0
            }
            state.pending += event
            return true
        }
        state.signalAll()
        return queued
    }

    /// Ends the stream: what is queued is still written, then the response ends.
    public func close() {
        state.withLock { $0.closed = true }
        state.signalAll()
    }

    /// Copies what waits into `buffer`, waiting up to ``keepAliveInterval`` for something.
    /// - Returns: the bytes copied (``keepAlive`` after a quiet interval), or `nil` once the
    ///   stream is closed and everything queued was written.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        state.withLock(waitingUpTo: Self.keepAliveInterval, until: { $0.written < $0.pending.count || $0.closed }) { state, ready -> Int? in
            guard ready else {
                let count = min(buffer.count, Self.keepAlive.count)
                buffer.copyBytes(from: Self.keepAlive[..<count])
                return count
            }
            guard state.written < state.pending.count else { return nil }
            let count = min(buffer.count, state.pending.count - state.written)
            buffer.copyBytes(from: state.pending[state.written..<(state.written + count)])
            state.written += count
            if state.written == state.pending.count {
                state.pending.removeAll(keepingCapacity: true)
                state.written = 0
            }
            return count
        }
    }
}
