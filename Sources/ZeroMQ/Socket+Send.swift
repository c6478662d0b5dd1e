import CZeroMQ

extension Socket {
    /// Sends one frame, copying `bytes` into libzmq.
    /// - Parameters:
    ///   - bytes: the frame's content.
    ///   - more: whether more frames of the same message follow.
    ///   - wait: block until queued (`true`), or report would-block (`false`).
    /// - Returns: `false` only when `wait` is `false` and the send would block.
    /// - Throws: `ZeroMQError` for any other failure (`hostUnreachable`, `contextTerminated`…).
    @discardableResult
    public func send(_ bytes: UnsafeRawBufferPointer, more: Bool = false, wait: Bool = true) throws(ZeroMQError) -> Bool {
        let handle = try open("send")
        mayHideActivity = true
        let flags = (more ? ZMQ_SNDMORE : 0) | (wait ? 0 : ZMQ_DONTWAIT)
        do {
            try zmqCall("send") { zmq_send(handle, bytes.baseAddress, bytes.count, flags) }
            return true
        } catch  where error.code == EAGAIN && !wait {
            return false
        }
    }

    /// Sends one frame holding `bytes`. See ``send(_:more:wait:)-(UnsafeRawBufferPointer,_,_)``.
    @discardableResult
    public func send(_ bytes: [UInt8], more: Bool = false, wait: Bool = true) throws(ZeroMQError) -> Bool {
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(ZeroMQError) in try send(buffer, more: more, wait: wait) }
        }.get()
    }

    /// Sends one frame holding the UTF-8 of `string`.
    @discardableResult
    public func send(_ string: String, more: Bool = false, wait: Bool = true) throws(ZeroMQError) -> Bool {
        try send(Array(string.utf8), more: more, wait: wait)
    }

    /// Sends a ``Message``, handing its content to libzmq without a copy; the message is
    /// empty afterwards (when sent).
    @discardableResult
    public func send(_ message: Message, more: Bool = false, wait: Bool = true) throws(ZeroMQError) -> Bool {
        let handle = try open("send")
        mayHideActivity = true
        let flags = (more ? ZMQ_SNDMORE : 0) | (wait ? 0 : ZMQ_DONTWAIT)
        do {
            try zmqCall("send") { zmq_msg_send(message.pointer, handle, flags) }
            return true
        } catch  where error.code == EAGAIN && !wait {
            return false
        }
    }

    /// Sends a multipart message; frame boundaries are kept at the receiver.
    ///
    /// libzmq queues a multipart message atomically: if the first frame is accepted, the
    /// rest are too, so a non-blocking send never leaves half a message behind.
    /// - Parameters:
    ///   - frames: the frames, in order. An empty array sends nothing.
    ///   - wait: block until queued, or report would-block.
    /// - Returns: `false` only when `wait` is `false` and the first frame would block.
    @discardableResult
    public func send(multipart frames: [[UInt8]], wait: Bool = true) throws(ZeroMQError) -> Bool {
        for (index, frame) in frames.enumerated() {
            let sent = try send(frame, more: index < frames.count - 1, wait: wait || index > 0)
            if !sent { return false }
        }
        return true
    }
}
