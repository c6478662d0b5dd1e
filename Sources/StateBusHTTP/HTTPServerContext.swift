import CMicroHTTPD
import StateBusRuntime

/// What libmicrohttpd's callbacks reach through their context pointer: the handler, the
/// bound on request bodies, and the event streams open, to end them when the server stops.
/// A class, to be passed to C.
final class HTTPServerContext: Sendable {
    let handler: HTTPServer.Handler
    let bodyLimit: Int
    /// The most event streams open at once: each holds a connection (and its thread) for as
    /// long as its client reads, and the other requests need connections too.
    let streamLimit: Int
    /// A declared body larger than this is answered at once, unread (the client sees its
    /// connection close while it sends); a smaller one past ``bodyLimit`` is read and dropped.
    var earlyAnswerBytes: Int { max(16 * bodyLimit, 64 * 1024) }
    private let streams = Locked<(open: [ObjectIdentifier: HTTPEventStream], stopping: Bool)>(([:], false))

    init(handler: @escaping HTTPServer.Handler, bodyLimit: Int, streamLimit: Int) {
        self.handler = handler
        self.bodyLimit = bodyLimit
        self.streamLimit = streamLimit
    }

    /// Ends every open event stream and refuses new ones (the server stops).
    func closeStreams() {
        let open = streams.withLock { streams in
            streams.stopping = true
            return Array(streams.open.values)
        }
        for stream in open { stream.close() }
    }

    /// A request's body as it arrives, kept between the calls of ``handleRequest``
    /// (libmicrohttpd's `con_cls`), freed by ``requestCompleted``.
    final class Upload {
        var body: [UInt8] = []
        var tooLarge = false
        /// Answered already (a body declared too large is answered before it arrives).
        var answered = false
    }

    /// A stream being written, with what its callbacks need to take it off the server's list.
    final class Writing {
        let stream: HTTPEventStream
        let context: HTTPServerContext

        init(stream: HTTPEventStream, context: HTTPServerContext) {
            self.stream = stream
            self.context = context
        }
    }

    /// MHD_HEADER_KIND: a request's header fields (the header's macros for the deprecated
    /// kinds hide the name from Swift).
    private static let headerKind = MHD_ValueKind(rawValue: 1)!
    /// MHD_RESPMEM_MUST_COPY: libmicrohttpd copies the body, which lives only for the call.
    private static let copyMode = MHD_ResponseMemoryMode(rawValue: 2)!
    /// The most bytes of an event stream written in one go.
    private static let streamBlockBytes = 32 * 1024

    /// libmicrohttpd's request callback, on the connection's thread. Called first with the
    /// headers (the request's upload is made), then with each piece of the body, then once
    /// more with none: the request is whole, and the handler answers it.
    static let handleRequest: MHD_AccessHandlerCallback = { pointer, connection, url, method, _, data, size, requestContext in
        guard let pointer, let connection, let url, let method, let size, let requestContext else { return .NO }
        let context = Unmanaged<HTTPServerContext>.fromOpaque(pointer).takeUnretainedValue()
        guard let kept = requestContext.pointee else {
            let upload = Upload()
            requestContext.pointee = Unmanaged.passRetained(upload).toOpaque()
            // A body declared far larger than the bound is answered now, not read first: the
            // connection's thread would be held while it arrives. One a little larger is read
            // (and dropped) before the answer, as a client that is still sending expects.
            guard let declared = MHD_lookup_connection_value(connection, HTTPServerContext.headerKind, "Content-Length"),
                let length = Int(String(cString: declared)), length > context.earlyAnswerBytes
            else { return .YES }
            upload.tooLarge = true
            upload.answered = true
            return context.queue(
                context.handler(HTTPRequest(method: String(cString: method), path: String(cString: url), bodyExceededLimit: true)), on: connection)
        }
        let upload = Unmanaged<Upload>.fromOpaque(kept).takeUnretainedValue()
        if size.pointee > 0 {
            if let data, !upload.tooLarge {
                if upload.body.count + size.pointee > context.bodyLimit {
                    upload.tooLarge = true
                    upload.body = []
                } else {
                    upload.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size.pointee))
                }
            }
            size.pointee = 0
            return .YES
        }
        guard !upload.answered else { return .YES }
        upload.answered = true
        let answer = context.handler(
            HTTPRequest(method: String(cString: method), path: String(cString: url), body: upload.body, bodyExceededLimit: upload.tooLarge))
        return context.queue(answer, on: connection)
    }

    /// Hands `answer` to libmicrohttpd for `connection`.
    func queue(_ answer: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        let response: OpaquePointer?
        switch answer.body {
        case .bytes(let bytes):
            response = bytes.withUnsafeBytes { bytes in
                MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), Self.copyMode)
            }
        case .events(let stream):
            let refusal = streams.withLock { streams -> HTTPResponse? in
                if streams.stopping { return .text(503, "the server is stopping") }
                guard streams.open.count < streamLimit else {
                    return .text(503, "\(streamLimit) event streams are open already, the most this server keeps: close a page and try again")
                }
                streams.open[ObjectIdentifier(stream)] = stream
                return nil
            }
            if let refusal {
                stream.close()
                return queue(refusal, on: connection)
            }
            let writing = Unmanaged.passRetained(Writing(stream: stream, context: self))
            response = MHD_create_response_from_callback(UInt64.max, Self.streamBlockBytes, Self.readStream, writing.toOpaque(), Self.streamEnded)
            if response == nil {
                writing.release()
                stream.close()
                streams.withLock { _ = $0.open.removeValue(forKey: ObjectIdentifier(stream)) }
            }
        }
        guard let response else { return .NO }
        defer { MHD_destroy_response(response) }
        for (name, value) in answer.headers { _ = MHD_add_response_header(response, name, value) }
        return MHD_queue_response(connection, UInt32(answer.status), response)
    }

    /// An event stream's reader, on its connection's thread: the next bytes, waiting for
    /// them (a comment after a quiet second), or the end once the stream is closed.
    private static let readStream: MHD_ContentReaderCallback = { pointer, _, buffer, capacity in
        guard let pointer, let buffer else { return -2 }  // MHD_CONTENT_READER_END_WITH_ERROR
        let writing = Unmanaged<Writing>.fromOpaque(pointer).takeUnretainedValue()
        guard let count = writing.stream.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: capacity)) else {
            return -1  // MHD_CONTENT_READER_END_OF_STREAM
        }
        return count
    }

    /// The stream's response is done with (written to its end, the client gone, or the
    /// server stopping): the stream closes, and the producer stops.
    private static let streamEnded: MHD_ContentReaderFreeCallback = { pointer in
        guard let pointer else { return }
        let writing = Unmanaged<Writing>.fromOpaque(pointer).takeRetainedValue()
        writing.stream.close()
        writing.context.streams.withLock { _ = $0.open.removeValue(forKey: ObjectIdentifier(writing.stream)) }
    }

    /// A request ended: its upload is freed.
    static let requestCompleted: MHD_RequestCompletedCallback = { _, _, requestContext, _ in
        guard let requestContext, let kept = requestContext.pointee else { return }
        Unmanaged<Upload>.fromOpaque(kept).release()
        requestContext.pointee = nil
    }
}
