import Foundation

// One unary call: encode, post to each endpoint in turn with a deadline, classify the answer.
// Which failures move on to the next endpoint is decided here and nowhere else.

extension EtcdClient {
    /// How a call's answer is framed.
    enum Framing {
        /// A unary call: the message itself.
        case unary
        /// A streaming call used one-shot (keepalive): `{"result":{…}}` or `{"error":{…}}`.
        case streamLine
    }

    /// What one endpoint's attempt came to.
    private enum AttemptOutcome<Response: Sendable> {
        case answered(Response)
        /// Another endpoint may do better: unreachable, too slow, or without a leader.
        case tryNext(EtcdError.Kind, String)
    }

    /// Posts `request` to `path`, failing over between endpoints, and decodes the answer.
    /// - Throws: ``EtcdError``: the refusal of an endpoint that answered, or, when none did,
    ///   one naming every endpoint tried with the last reason.
    func post<Request: Encodable & Sendable, Response: Decodable & Sendable>(
        _ path: String, _ request: Request, framing: Framing = .unary, as response: Response.Type = Response.self
    ) async throws(EtcdError) -> Response {
        let body: [UInt8]
        do {
            body = Array(try JSONEncoder().encode(request))
        } catch {
            throw EtcdError(.invalidArgument, endpoints: endpoints, message: "Could not encode the request to \(path): \(error)")
        }
        var tried: [String] = []
        var lastFailure: (kind: EtcdError.Kind, reason: String) = (.unreachable, "no endpoint was tried")
        for endpoint in endpointsInTryOrder() {
            tried.append(endpoint)
            let outcome: AttemptOutcome<Response> = try await attempt(path, body: body, at: endpoint, framing: framing)
            switch outcome {
            case .answered(let answer):
                endpointAnswered(endpoint)
                return answer
            case .tryNext(let kind, let reason):
                lastFailure = (kind, reason)
                logger.debug(
                    "etcd endpoint failed, trying the next one",
                    metadata: ["endpoint": "\(endpoint)", "path": "\(path)", "reason": "\(reason)"])
            }
        }
        throw EtcdError(
            lastFailure.kind, endpoints: tried,
            message: "etcd request \(path) failed at every endpoint tried; the last one: \(lastFailure.reason)")
    }

    /// One endpoint's attempt at a call.
    private func attempt<Response: Decodable & Sendable>(
        _ path: String, body: [UInt8], at endpoint: String, framing: Framing
    ) async throws(EtcdError) -> AttemptOutcome<Response> {
        let answer: (status: Int, body: Data)
        do {
            answer = try await transfers.exchange(request(.post, path, at: endpoint, body: body), limit: Self.maximumBodyBytes)
        } catch {
            switch error {
            case .cancelled:
                throw EtcdError(.cancelled, endpoints: [endpoint], message: "etcd request \(path) was cancelled")
            case .shutDown:
                throw EtcdError(.cancelled, endpoints: [endpoint], message: "etcd request \(path) was ended: the client was shut down")
            case .timedOut(let why):
                return .tryNext(.timeout, "\(endpoint) did not answer within \(requestTimeout) (\(why))")
            case .unreachable(let why):
                return .tryNext(.unreachable, "\(endpoint) could not be reached: \(why)")
            case .refusedByReceiver(let why):
                throw EtcdError(.badResponse, endpoints: [endpoint], message: "Could not read etcd's answer to \(path): \(why)")
            }
        }
        return try classify(answer.status, answer.body, path: path, endpoint: endpoint, framing: framing)
    }

    /// Turns an HTTP answer into a decoded response, a reason to try the next endpoint, or an error.
    private func classify<Response: Decodable & Sendable>(
        _ status: Int, _ bytes: Data, path: String, endpoint: String, framing: Framing
    ) throws(EtcdError) -> AttemptOutcome<Response> {
        guard status == 200 else {
            let refusal = refusal(status: status, body: bytes, path: path, endpoint: endpoint)
            if refusal.tryNext { return .tryNext(refusal.error.kind, refusal.error.message) }
            throw refusal.error
        }
        let decoder = JSONDecoder()
        do {
            switch framing {
            case .unary:
                return .answered(try decoder.decode(Response.self, from: bytes))
            case .streamLine:
                let line = try decoder.decode(WireStreamLine<Response>.self, from: firstLine(of: bytes))
                if let result = line.result { return .answered(result) }
                if let error = line.error {
                    let refusal = refusal(grpcCode: error.grpcCode, message: error.message, status: status, path: path, endpoint: endpoint)
                    if refusal.tryNext { return .tryNext(refusal.error.kind, refusal.error.message) }
                    throw refusal.error
                }
                throw EtcdError(.badResponse, endpoints: [endpoint], message: "etcd answered \(path) with neither a result nor an error")
            }
        } catch let error as EtcdError {
            throw error
        } catch {
            throw EtcdError(
                .badResponse, endpoints: [endpoint],
                message: "Could not read etcd's answer to \(path) (\(error)): \(preview(bytes))")
        }
    }

    /// An error answer and whether another endpoint may do better.
    struct Refusal {
        /// The error to throw when no endpoint does better.
        var error: EtcdError
        /// True for an endpoint that is unavailable (no leader, timed out inside etcd).
        var tryNext: Bool
    }

    /// Reads an answer other than HTTP 200: a unary error body, a streaming error line, or
    /// something else.
    func refusal(status: Int, body bytes: Data, path: String, endpoint: String) -> Refusal {
        let decoder = JSONDecoder()
        if let unary = try? decoder.decode(WireUnaryError.self, from: bytes), unary.code != nil {
            return refusal(grpcCode: unary.code, message: unary.message ?? unary.error, status: status, path: path, endpoint: endpoint)
        }
        if let line = try? decoder.decode(WireStreamLine<WireEmpty>.self, from: firstLine(of: bytes)), let error = line.error {
            return refusal(grpcCode: error.grpcCode, message: error.message, status: status, path: path, endpoint: endpoint)
        }
        if status == 503 {
            return Refusal(
                error: EtcdError(
                    .rejected(grpcCode: 14, message: preview(bytes)), endpoints: [endpoint],
                    message: "\(endpoint) answered \(path) with HTTP 503: \(preview(bytes))"),
                tryNext: true)
        }
        return Refusal(
            error: EtcdError(
                .badResponse, endpoints: [endpoint],
                message: "etcd answered \(path) with HTTP \(status) and an unexpected body: \(preview(bytes))"),
            tryNext: false)
    }

    /// An error that etcd reported with a gRPC code: unavailable (no leader, timed out inside
    /// etcd) may go better at another endpoint; a missing lease and every other refusal not.
    func refusal(grpcCode: Int?, message: String?, status: Int, path: String, endpoint: String) -> Refusal {
        let code = grpcCode ?? -1
        let text = message ?? "HTTP \(status)"
        if code == 14 || status == 503 {
            return Refusal(
                error: EtcdError(.rejected(grpcCode: code, message: text), endpoints: [endpoint], message: "\(endpoint) is unavailable: \(text)"),
                tryNext: true)
        }
        if code == 5 {
            return Refusal(error: EtcdError(.leaseNotFound, endpoints: [endpoint], message: "etcd request \(path) failed: \(text)"), tryNext: false)
        }
        return Refusal(
            error: EtcdError(
                .rejected(grpcCode: code, message: text), endpoints: [endpoint],
                message: "etcd refused \(path) (gRPC code \(code), HTTP \(status)): \(text)"),
            tryNext: false)
    }

    /// The first newline-delimited JSON line of a streaming answer.
    func firstLine(of bytes: Data) -> Data {
        guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else { return bytes }
        return bytes[bytes.startIndex..<newline]
    }

    /// The start of a body, for error messages.
    func preview(_ bytes: Data) -> String {
        let text = String(decoding: bytes.prefix(300), as: UTF8.self)
        return text.isEmpty ? "(empty body)" : text
    }
}
