import Foundation

/// The echo at another view in lockstep: the observing process reports each value it has
/// taken on a named pipe, and the writer waits for that report before its next write.
///
/// Without it, a write starts as soon as the writer holds its own copy of the last one, and
/// on one CPU (the low-latency profile) an observer whose copy the host sent second is still
/// waiting for the CPU then: its figure takes in the writer's next write. With it, every
/// write starts from a quiet system, the writer's and the observer's alike, as the echo
/// figures say they do. The reports travel outside the timed span (after the observer's
/// arrival time, before the writer's next send time), on the same pipe for StateBus and raw
/// libzmq.
final class ObserverReports {
    private let descriptor: Int32
    private let path: String

    /// Makes the named pipe at `path`, before either process opens it.
    /// - Throws: `BenchError` when the pipe cannot be made.
    static func create(at path: String) throws {
        guard mkfifo(path, 0o600) == 0 else { throw BenchError("could not make the pipe \(path): \(String(cString: strerror(errno)))") }
    }

    /// Opens the pipe made by ``create(at:)``; either side may open it first (read and
    /// write, so that the open does not wait for the other side).
    /// - Throws: `BenchError` when it cannot be opened.
    init(opening path: String) throws {
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { throw BenchError("could not open the pipe \(path): \(String(cString: strerror(errno)))") }
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close(descriptor) }

    /// The observer's side: it has taken every value up to `value`.
    /// - Throws: `BenchError` when the report cannot be written.
    func report(_ value: UInt64) throws {
        var value = value
        // 8 bytes, under PIPE_BUF: the write is whole or fails.
        guard write(descriptor, &value, 8) == 8 else { throw BenchError("could not report to \(path): \(String(cString: strerror(errno)))") }
    }

    /// The writer's side: waits until the observer has reported `value` (or a later one).
    /// - Throws: `BenchError` when no such report comes within `timeout`.
    func wait(for value: UInt64, timeout: Duration) throws {
        let deadline = ContinuousClock.now + timeout
        var reported: UInt64 = 0
        while reported < value {
            let left = ContinuousClock.now.duration(to: deadline)
            var descriptors = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
            let milliseconds = max(0, Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            let ready = left > .zero ? poll(&descriptors, 1, milliseconds) : 0
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else {
                throw BenchError("the observer did not report value \(value) within \(timeout) (last reported: \(reported))")
            }
            guard read(descriptor, &reported, 8) == 8 else { throw BenchError("could not read \(path): \(String(cString: strerror(errno)))") }
        }
    }
}
