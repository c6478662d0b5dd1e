import CZeroMQ

/// The readiness events of a socket or file descriptor.
public struct PollEvents: OptionSet, Sendable, Hashable {
    /// The raw `ZMQ_POLL*` mask.
    public let rawValue: Int16
    /// Creates events from a raw `ZMQ_POLL*` mask.
    public init(rawValue: Int16) { self.rawValue = rawValue }
    /// At least one message can be received without blocking.
    public static let readable = PollEvents(rawValue: Int16(ZMQ_POLLIN))
    /// At least one message can be sent without blocking.
    public static let writable = PollEvents(rawValue: Int16(ZMQ_POLLOUT))
    /// An error condition (file descriptors only).
    public static let error = PollEvents(rawValue: Int16(ZMQ_POLLERR))
}

/// Waits on several sockets (and plain file descriptors) at once, with a timeout.
///
/// Like the sockets it polls, a poller belongs to one thread.
///
/// ```swift
/// let poller = Poller()
/// let a = poller.add(socketA, events: .readable)
/// let b = poller.add(socketB, events: .readable)
/// for index in try poller.poll(timeout: .milliseconds(500)) where index == a { ... }
/// ```
public final class Poller {
    private var items: [zmq_pollitem_t] = []
    private var sockets: [Socket?] = []

    /// Creates an empty poller.
    public init() {}

    /// Adds a socket to watch.
    /// - Parameters:
    ///   - socket: the socket; the poller keeps it alive.
    ///   - events: what to wait for.
    /// - Returns: the item's index, as returned by ``poll(timeout:)``.
    @discardableResult
    public func add(_ socket: Socket, events: PollEvents) -> Int {
        items.append(zmq_pollitem_t(socket: socket.handle, fd: -1, events: events.rawValue, revents: 0))
        sockets.append(socket)
        return items.count - 1
    }

    /// Adds a plain file descriptor to watch (for example an eventfd used to wake the poll).
    /// - Returns: the item's index.
    @discardableResult
    public func add(fileDescriptor fd: Int32, events: PollEvents) -> Int {
        items.append(zmq_pollitem_t(socket: nil, fd: fd, events: events.rawValue, revents: 0))
        sockets.append(nil)
        return items.count - 1
    }

    /// Changes what an item waits for; an empty set makes the poll skip it.
    public func setEvents(_ events: PollEvents, at index: Int) {
        items[index].events = events.rawValue
    }

    /// Removes every item whose socket is `socket`.
    public func remove(_ socket: Socket) {
        var index = 0
        while index < sockets.count {
            if sockets[index] === socket {
                sockets.remove(at: index)
                items.remove(at: index)
            } else {
                index += 1
            }
        }
    }

    /// The number of items.
    public var count: Int { items.count }

    /// The events seen on an item by the last poll.
    public func events(at index: Int) -> PollEvents { PollEvents(rawValue: items[index].revents) }

    /// Waits until at least one item is ready or the timeout passes.
    /// - Parameter timeout: how long to wait; `nil` waits forever, `.zero` does not wait.
    /// - Returns: the indexes of the ready items (empty after a timeout).
    /// - Throws: `ZeroMQError` (`contextTerminated` when the context shuts down).
    public func poll(timeout: Duration?) throws(ZeroMQError) -> [Int] {
        let milliseconds: Int = timeout.map { Int(Self.milliseconds(rounding: $0)) } ?? -1
        let ready = try items.withUnsafeMutableBufferPointer { buffer throws(ZeroMQError) in
            try zmqCall("zmq_poll") { zmq_poll(buffer.baseAddress, Int32(buffer.count), milliseconds) }
        }
        guard ready > 0 else { return [] }
        return items.indices.filter { items[$0].revents != 0 }
    }

    /// A duration in whole milliseconds, rounded up so a short wait does not become a spin.
    static func milliseconds(rounding duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        let fraction = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return seconds * 1000 + fraction
    }
}
