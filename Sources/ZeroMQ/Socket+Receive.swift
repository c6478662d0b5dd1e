import CZeroMQ

extension Socket {
    /// Receives one frame into `message`, replacing its content, without copying.
    /// - Parameters:
    ///   - message: the message to fill; reuse one across receives to avoid allocations.
    ///   - wait: block until a frame arrives (`true`), or return at once (`false`).
    /// - Returns: `false` only when `wait` is `false` and nothing was waiting.
    /// - Throws: `ZeroMQError` (`contextTerminated`, or `again` after a receive timeout).
    @discardableResult
    public func receive(into message: Message, wait: Bool = true) throws(ZeroMQError) -> Bool {
        let handle = try open("receive")
        mayHideActivity = true
        do {
            try zmqCall("receive") { zmq_msg_recv(message.pointer, handle, wait ? 0 : ZMQ_DONTWAIT) }
            return true
        } catch  where error.code == EAGAIN && !wait {
            return false
        }
    }

    /// Receives one frame, blocking until it arrives.
    /// - Returns: the frame; check ``Message/hasMore`` for multipart messages.
    /// - Throws: `ZeroMQError`.
    public func receive() throws(ZeroMQError) -> Message {
        let message = Message()
        try receive(into: message, wait: true)
        return message
    }

    /// Receives one frame if one is waiting.
    /// - Returns: the frame, or `nil` when receiving would block.
    /// - Throws: `ZeroMQError` for failures other than would-block.
    public func tryReceive() throws(ZeroMQError) -> Message? {
        let message = Message()
        return try receive(into: message, wait: false) ? message : nil
    }

    /// Receives every frame of one multipart message, blocking until it arrives.
    /// - Returns: the frames, in order (at least one).
    public func receiveMultipart() throws(ZeroMQError) -> [Message] {
        var frames = [try receive()]
        while frames[frames.count - 1].hasMore { frames.append(try receive()) }
        return frames
    }

    /// Receives every frame of one multipart message if one is waiting.
    ///
    /// libzmq delivers multipart messages atomically, so once the first frame is here the
    /// rest are too.
    /// - Returns: the frames, or `nil` when receiving would block.
    public func tryReceiveMultipart() throws(ZeroMQError) -> [Message]? {
        guard let first = try tryReceive() else { return nil }
        var frames = [first]
        while frames[frames.count - 1].hasMore { frames.append(try receive()) }
        return frames
    }
}
