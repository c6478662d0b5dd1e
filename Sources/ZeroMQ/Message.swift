import CZeroMQ

/// One frame of a ZeroMQ message, held in libzmq's own `zmq_msg_t`.
///
/// Receiving into a `Message` does not copy: read the bytes in place with
/// ``withUnsafeBytes(_:)``, and reuse one message for many receives
/// (``Socket/receive(into:wait:)``). Sending a `Message` hands its content to libzmq,
/// leaving the message empty. Not `Sendable`: a message belongs to the thread that uses it.
public final class Message {
    let pointer: UnsafeMutablePointer<zmq_msg_t>

    /// Creates an empty message, ready to receive into.
    public init() {
        pointer = .allocate(capacity: 1)
        zmq_msg_init(pointer)
    }

    /// Creates a message holding a copy of `bytes`.
    /// - Parameter bytes: the frame's content.
    public init(bytes: UnsafeRawBufferPointer) {
        pointer = .allocate(capacity: 1)
        zmq_msg_init_size(pointer, bytes.count)
        if let base = bytes.baseAddress, bytes.count > 0 {
            zmq_msg_data(pointer).copyMemory(from: base, byteCount: bytes.count)
        }
    }

    /// Creates a message holding a copy of `bytes`.
    /// - Parameter bytes: the frame's content.
    public convenience init(_ bytes: some Sequence<UInt8>) {
        let array = Array(bytes)
        self.init(bytes: UnsafeRawBufferPointer(start: nil, count: 0))
        array.withUnsafeBytes { self.replaceContent(with: $0) }
    }

    /// Creates a message holding the UTF-8 bytes of `string`.
    /// - Parameter string: the frame's content.
    public convenience init(_ string: String) {
        self.init(Array(string.utf8))
    }

    deinit {
        zmq_msg_close(pointer)
        pointer.deallocate()
    }

    /// Replaces the content with a copy of `bytes`.
    /// - Parameter bytes: the new content.
    public func replaceContent(with bytes: UnsafeRawBufferPointer) {
        zmq_msg_close(pointer)
        zmq_msg_init_size(pointer, bytes.count)
        if let base = bytes.baseAddress, bytes.count > 0 {
            zmq_msg_data(pointer).copyMemory(from: base, byteCount: bytes.count)
        }
    }

    /// The number of bytes in the frame.
    public var count: Int { zmq_msg_size(pointer) }

    /// Whether more frames of the same multipart message follow this one (after a receive).
    public var hasMore: Bool { zmq_msg_more(pointer) == 1 }

    /// Calls `body` with the frame's bytes, in place, without copying.
    /// - Parameter body: reads the bytes; the buffer is valid only during the call.
    /// - Returns: what `body` returns.
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(start: zmq_msg_data(pointer), count: zmq_msg_size(pointer)))
    }

    /// A copy of the frame's bytes.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// The frame's bytes decoded as UTF-8 (invalid sequences repaired).
    public var string: String { withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
}
