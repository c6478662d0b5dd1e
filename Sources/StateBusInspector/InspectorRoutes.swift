import Dispatch
import Foundation
import StateBusHTTP
import StateBusRuntime

/// What the inspector's server answers: the page, its event stream, and its edits and
/// seeks, each posted as JSON and answered with the host's verdict as JSON.
final class InspectorRoutes: Sendable {
    let model: InspectorModel
    /// The edits and seeks waiting for their answer, each on its connection's thread, so that
    /// ``stop()`` ends their waits; and whether the inspector is stopping.
    private let waiting = Locked<(waits: [ObjectIdentifier: DispatchSemaphore], stopping: Bool)>(([:], false))

    init(model: InspectorModel) {
        self.model = model
    }

    /// Ends every wait for an answer (each gets 503) and refuses new edits: the server is
    /// about to stop, and its stop waits for every connection's thread.
    func stop() {
        let waits = waiting.withLock { waiting in
            waiting.stopping = true
            return Array(waiting.waits.values)
        }
        for wait in waits { wait.signal() }
    }

    /// How long an edit or a seek may wait for the host (the inspector's replica waits for
    /// its own verdict within this).
    static let answerWait: Duration = .seconds(30)
    /// The largest edit the page may post.
    static let maximumBodyBytes = 1 << 20

    /// The answer to `request`, on its connection's thread.
    func answer(_ request: HTTPRequest) -> HTTPResponse {
        switch request.path {
        case "/":
            guard request.method == "GET" || request.method == "HEAD" else { return Self.notAllowed(request, allow: "GET, HEAD") }
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")], body: Array(InspectorPage.html.utf8))
        case "/events":
            guard request.method == "GET" else { return Self.notAllowed(request, allow: "GET") }
            let stream = HTTPEventStream()
            let session = InspectorSession(model: model, stream: stream)
            Task { await session.run() }
            return HTTPResponse(events: stream)
        case "/write":
            let write: InspectorMessage.Write
            switch Self.posted(
                InspectorMessage.Write.self, in: request,
                shape: "a write is a JSON object with the strings object, property and json (the new value as JSON text)")
            {
            case .refused(let answer): return answer
            case .message(let message): write = message
            }
            let model = self.model
            return json(within: "the host's verdict") { await model.write(object: write.object, property: write.property, json: write.json) }
        case "/seek":
            let seek: InspectorMessage.Seek
            switch Self.posted(InspectorMessage.Seek.self, in: request, shape: "a seek is a JSON object with the number sequence") {
            case .refused(let answer): return answer
            case .message(let message): seek = message
            }
            let model = self.model
            return json(within: "the recording's replay") { await model.seek(to: seek.sequence) }
        default:
            return .text(404, "not found: the inspector serves /, /events, and POST /write and /seek")
        }
    }

    /// A posted JSON message, or the answer that refuses the request.
    private enum Posted<Message> {
        case message(Message)
        case refused(HTTPResponse)
    }

    /// The message `request` posts: 405 for another method, 413 for a body past the bound,
    /// 400 (saying `shape`) for one that is not such a message.
    private static func posted<Message: Decodable>(_ type: Message.Type, in request: HTTPRequest, shape: String) -> Posted<Message> {
        guard request.method == "POST" else { return .refused(notAllowed(request, allow: "POST")) }
        guard !request.bodyExceededLimit else { return .refused(.bodyTooLarge(limit: maximumBodyBytes)) }
        guard let message = try? JSONDecoder().decode(type, from: Data(request.body)) else { return .refused(.text(400, shape)) }
        return .message(message)
    }

    private static func notAllowed(_ request: HTTPRequest, allow: String) -> HTTPResponse {
        .text(405, "method \(request.method) not allowed for \(request.path)", headers: [("Allow", allow)])
    }

    /// Runs `body` and answers with its result as JSON, waiting on this connection's thread
    /// (not one of Swift's cooperative pool) up to ``answerWait``: 504 past it, 503 when the
    /// inspector stops first.
    private func json<Answer: Encodable & Sendable>(
        within what: String, _ body: @escaping @Sendable () async -> Answer
    ) -> HTTPResponse {
        let done = DispatchSemaphore(value: 0)
        let registered = waiting.withLock { waiting in
            if !waiting.stopping { waiting.waits[ObjectIdentifier(done)] = done }
            return !waiting.stopping
        }
        guard registered else { return .text(503, "the inspector is stopping") }
        defer { waiting.withLock { _ = $0.waits.removeValue(forKey: ObjectIdentifier(done)) } }
        let result = Locked<Answer?>(nil)
        let task = Task {
            let answer = await body()
            result.withLock { $0 = answer }
            done.signal()
        }
        let (seconds, attoseconds) = Self.answerWait.components
        let timeout = DispatchTime.now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        let answered = done.wait(timeout: timeout) == .success
        guard let answer = result.withLock({ $0 }) else {
            task.cancel()
            return answered ? .text(503, "the inspector is stopping") : .text(504, "no answer from \(what) within \(Self.answerWait)")
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: Array(InspectorJSON.encode(answer).utf8))
    }
}
