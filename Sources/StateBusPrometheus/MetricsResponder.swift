import StateBusHTTP

/// What the metrics endpoint answers: `GET` or `HEAD` of `/metrics`, the registry's text
/// made anew for each request; anything else an error status and a line saying what this
/// server serves.
enum MetricsResponder {
    /// The answer to `request`, with `body` making the metrics text.
    static func answer(_ request: HTTPRequest, body: () -> [UInt8]) -> HTTPResponse {
        guard request.path == "/metrics" else { return .text(404, "not found: this server serves /metrics only") }
        guard request.method == "GET" || request.method == "HEAD" else {
            return .text(405, "method \(request.method) not allowed: /metrics is read with GET", headers: [("Allow", "GET, HEAD")])
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")], body: body())
    }
}
