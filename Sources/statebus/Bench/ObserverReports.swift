import Foundation

/// The echo at another view in lockstep: the observing process reports each value it has
/// taken on a named pipe, and the writer waits for that report before its next write.
///
/// Without it, a write starts as soon as the writer holds its own copy of the last one, and
/// on one CPU (the low-latency profile) an observer whose copy the host sent second is still
/// waiting for the CPU then: its figure takes in the writer's next write. With it, every
/// write starts once both views have taken the last one, as the echo figures say; only the
/// observer's return to its wait after reporting can overlap the next write. The reports
/// travel outside the timed span (after the observer's arrival time, before the writer's
/// next send time), on the same pipe for StateBus and raw libzmq.
///
/// Before it measures, the raw writer also waits for the raw observer's report of a probe
/// (value 0): the observer's subscription has then reached the PUB, and it will take every
/// write.
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
            guard let next = try nextReport(before: deadline) else {
                throw BenchError("the observer did not report value \(value) within \(timeout) (last reported: \(reported))")
            }
            reported = max(reported, next)
        }
    }

    /// The writer's side: the next report, or `nil` when none comes before `deadline`.
    /// - Throws: `BenchError` when the pipe cannot be polled or read.
    func nextReport(before deadline: ContinuousClock.Instant) throws -> UInt64? {
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return nil }
            var descriptors = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
            // Rounded up, so that the wait is never shorter than asked.
            let milliseconds = Int32(
                clamping: left.components.seconds * 1000 + (left.components.attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
            let ready = poll(&descriptors, 1, milliseconds)
            if ready < 0, errno == EINTR { continue }
            guard ready >= 0 else { throw BenchError("could not poll \(path): \(String(cString: strerror(errno)))") }
            guard ready > 0 else { continue }
            var value: UInt64 = 0
            let count = read(descriptor, &value, 8)
            if count < 0, errno == EINTR { continue }
            // 8 bytes, written whole (under PIPE_BUF), are read whole.
            guard count == 8 else { throw BenchError("could not read \(path): \(String(cString: strerror(errno)))") }
            return value
        }
    }
}
