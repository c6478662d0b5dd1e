/// What the metrics server answers, kept apart from libmicrohttpd so that its rules read
/// plainly.
/// A class, to be passed to C as the server's context pointer.
final class MetricsResponder: Sendable {
    /// An answer: status, headers, body.
    struct Answer {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]
    }

    private let body: @Sendable () -> [UInt8]

    init(body: @escaping @Sendable () -> [UInt8]) {
        self.body = body
    }

    /// The answer to `method` on `path`.
    func answer(path: String, method: String) -> Answer {
        guard path == "/metrics" else {
            return Answer(
                status: 404, headers: [("Content-Type", "text/plain; charset=utf-8")],
                body: Array("not found: this server serves /metrics only\n".utf8))
        }
        guard method == "GET" || method == "HEAD" else {
            return Answer(
                status: 405, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Allow", "GET, HEAD")],
                body: Array("method \(method) not allowed: /metrics is read with GET\n".utf8))
        }
        return Answer(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")], body: body())
    }
}
