/// A request the server has read whole: what a ``HTTPServer``'s handler answers.
public struct HTTPRequest: Sendable {
    /// `GET`, `POST`, …
    public var method: String
    /// The path, without the query.
    public var path: String
    /// The body (empty for a request without one, and for one past the server's
    /// ``HTTPServer/Limits/bodyBytes``).
    public var body: [UInt8]
    /// Whether the body was larger than the server reads: it was not kept. A handler that
    /// takes a body answers ``HTTPResponse/bodyTooLarge(limit:)``; one that takes none
    /// answers as it would anyway (405 for a method it does not serve, say).
    public var bodyExceededLimit: Bool

    /// A request (for tests of a handler).
    public init(method: String, path: String, body: [UInt8] = [], bodyExceededLimit: Bool = false) {
        self.method = method
        self.path = path
        self.body = body
        self.bodyExceededLimit = bodyExceededLimit
    }
}

/// A handler's answer.
public struct HTTPResponse: Sendable {
    /// What follows the headers.
    public enum Body: Sendable {
        /// These bytes, with their length.
        case bytes([UInt8])
        /// Server-sent events for as long as the stream stays open, chunked.
        case events(HTTPEventStream)
    }

    /// The status code.
    public var status: Int
    /// Header fields, in order.
    public var headers: [(String, String)]
    /// The body.
    public var body: Body

    /// An answer with a body of bytes.
    public init(status: Int, headers: [(String, String)] = [], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = .bytes(body)
    }

    /// An answer whose body is a stream of server-sent events (`text/event-stream`).
    public init(events: HTTPEventStream) {
        status = 200
        headers = [("Content-Type", "text/event-stream"), ("Cache-Control", "no-store")]
        body = .events(events)
    }

    /// 413: the request's body is larger than the `limit` bytes the server reads.
    public static func bodyTooLarge(limit: Int) -> HTTPResponse {
        .text(413, "the request's body is larger than the \(limit) bytes this server reads")
    }

    /// A plain-text answer: a status and a line that says what happened.
    public static func text(_ status: Int, _ line: String, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")] + headers, body: Array((line + "\n").utf8))
    }
}
