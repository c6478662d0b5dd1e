import Foundation
import Synchronization

// Watches: one streaming POST /v3/watch per watch, answered with newline-delimited JSON
// lines, the first of which says the watch was created. Opening fails over between endpoints
// like a unary call; once open, a broken stream ends the watch and the caller watches again
// from the revision after the last event it saw.

extension EtcdClient {
    /// Watches one key.
    ///
    /// The stream yields each change after `startRevision` in order. It ends with an
    /// ``EtcdError`` when it could not be opened at any endpoint, when the connection breaks,
    /// or when etcd cancels the watch (for example because `startRevision` was compacted),
    /// and with one of kind `fellBehind` when the consumer leaves more than
    /// ``maximumWatchBacklogBytes`` of events untaken (after those events). It never ends
    /// without an error while the consumer is still iterating, so the caller knows to watch
    /// again. Cancelling the consuming task, or dropping the stream, closes
    /// the HTTP request.
    /// - Parameters:
    ///   - key: the key.
    ///   - startRevision: the first revision to report; nil for changes from now on.
    public func watch(key: [UInt8], startRevision: Int64? = nil) -> AsyncThrowingStream<EtcdWatchEvent, any Error> {
        watchWithBacklog(WireWatchCreateRequest(key: WireBytes(key), startRevision: startRevision.map(WireInt64.init))).events
    }

    /// Watches every key that starts with `prefix`; otherwise like ``watch(key:startRevision:)``.
    public func watch(prefix: [UInt8], startRevision: Int64? = nil) -> AsyncThrowingStream<EtcdWatchEvent, any Error> {
        watchWithBacklog(prefix: prefix, startRevision: startRevision).events
    }

    /// Like ``watch(prefix:startRevision:)``, with the watch's backlog (for tests).
    func watchWithBacklog(prefix: [UInt8], startRevision: Int64?) -> (events: AsyncThrowingStream<EtcdWatchEvent, any Error>, backlog: WatchBacklog) {
        watchWithBacklog(
            WireWatchCreateRequest(
                key: WireBytes(prefix.isEmpty ? [0] : prefix), rangeEnd: WireBytes(Self.rangeEnd(ofPrefix: prefix)),
                startRevision: startRevision.map(WireInt64.init)))
    }

    private func watchWithBacklog(_ create: WireWatchCreateRequest) -> (events: AsyncThrowingStream<EtcdWatchEvent, any Error>, backlog: WatchBacklog)
    {
        let backlog = WatchBacklog(limit: maximumWatchBacklogBytes)
        let task = Task {
            do throws(EtcdError) {
                try await self.runWatch(create, backlog)
                backlog.finish(throwing: nil)
            } catch {
                backlog.finish(throwing: error)
            }
        }
        let consumer = WatchConsumer(backlog: backlog, reader: task)
        return (AsyncThrowingStream(unfolding: { try await consumer.next() }), backlog)
    }

    /// Opens the watch at the first endpoint that accepts it and forwards its events.
    /// Returns only when the consumer went away; throws why the watch ended otherwise.
    private func runWatch(
        _ create: WireWatchCreateRequest, _ backlog: WatchBacklog
    ) async throws(EtcdError) {
        let body: [UInt8]
        do {
            body = Array(try JSONEncoder().encode(WireWatchRequest(createRequest: create)))
        } catch {
            throw EtcdError(.invalidArgument, endpoints: endpoints, message: "Could not encode the watch request: \(error)")
        }
        var tried: [String] = []
        var lastFailure = EtcdError(.unreachable, endpoints: [], message: "no endpoint was tried")
        for endpoint in endpointsInTryOrder() {
            tried.append(endpoint)
            let opened = WatchOpened()
            do {
                try await streamWatch(body, at: endpoint, opened: opened, backlog)
                return
            } catch {
                if Task.isCancelled { return }
                if opened.isOpen || !error.mayGoBetterElsewhere { throw error.error }
                lastFailure = error.error
                logger.debug(
                    "etcd watch could not be opened, trying the next endpoint", metadata: ["endpoint": "\(endpoint)", "reason": "\(error.error)"])
            }
        }
        throw EtcdError(
            lastFailure.kind, endpoints: tried, message: "etcd watch could not be opened at any endpoint tried; the last one: \(lastFailure.message)")
    }

    /// Why one endpoint's watch ended.
    private struct WatchEnd: Error {
        var error: EtcdError
        /// True when the watch never opened for a reason another endpoint may not share
        /// (unreachable, too slow, without a leader), so the next endpoint is worth a try.
        var mayGoBetterElsewhere: Bool
    }

    /// Streams one endpoint's watch, with the request timeout on its opening and none after.
    private func streamWatch(
        _ body: [UInt8], at endpoint: String, opened: WatchOpened,
        _ backlog: WatchBacklog
    ) async throws(WatchEnd) {
        let timeout = requestTimeout
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await self.readWatch(body, at: endpoint, opened: opened, backlog) }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    if !opened.isOpen {
                        throw WatchEnd(
                            error: EtcdError(.timeout, endpoints: [endpoint], message: "\(endpoint) did not open the watch within \(timeout)"),
                            mayGoBetterElsewhere: true)
                    }
                }
                for try await _ in group {}
            }
        } catch let end as WatchEnd {
            throw end
        } catch let error as EtcdError {
            throw WatchEnd(error: error, mayGoBetterElsewhere: false)
        } catch {
            if Task.isCancelled {
                throw WatchEnd(error: EtcdError(.cancelled, endpoints: [endpoint], message: "etcd watch was cancelled"), mayGoBetterElsewhere: false)
            }
            if case .shutDown = error as? HTTPTransferError {
                throw WatchEnd(
                    error: EtcdError(.cancelled, endpoints: [endpoint], message: "etcd watch was ended: the client was shut down"),
                    mayGoBetterElsewhere: false)
            }
            throw WatchEnd(
                error: EtcdError(.unreachable, endpoints: [endpoint], message: "etcd watch stream from \(endpoint) broke: \(error)"),
                mayGoBetterElsewhere: true)
        }
    }

    /// Sends the watch request and reads its answer lines until the stream ends.
    private func readWatch(
        _ body: [UInt8], at endpoint: String, opened: WatchOpened,
        _ backlog: WatchBacklog
    ) async throws {
        let reader = WatchAnswerReader(limit: Self.maximumBodyBytes) { [self] line in
            try handleWatchLine(line, endpoint: endpoint, opened: opened, backlog)
        }
        // No deadline here: the caller's timer bounds the opening, and an open watch is
        // silent for as long as nothing changes.
        do throws(HTTPTransferError) {
            try await transfers.perform(request(.post, "/v3/watch", at: endpoint, body: body, streaming: true), receiver: reader)
        } catch {
            guard case .refusedByReceiver(let why) = error else { throw error }
            if let end = why as? WatchEnd { throw end }
            throw WatchEnd(
                error: EtcdError(.badResponse, endpoints: [endpoint], message: "Could not read etcd's watch stream from \(endpoint): \(why)"),
                mayGoBetterElsewhere: false)
        }
        guard reader.status == 200 else {
            let refusal = refusal(status: reader.status, body: reader.refusalBody, path: "/v3/watch", endpoint: endpoint)
            throw WatchEnd(error: refusal.error, mayGoBetterElsewhere: refusal.tryNext)
        }
        try reader.readLastLine()
        throw WatchEnd(
            error: EtcdError(.unreachable, endpoints: [endpoint], message: "etcd at \(endpoint) closed the watch stream"),
            mayGoBetterElsewhere: !opened.isOpen)
    }

    /// Handles one answer line: creation, events, cancellation or an error.
    private func handleWatchLine(
        _ line: Data, endpoint: String, opened: WatchOpened, _ backlog: WatchBacklog
    ) throws {
        guard line.contains(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\r") }) else { return }
        let message: WireStreamLine<WireWatchResponse>
        do {
            message = try JSONDecoder().decode(WireStreamLine<WireWatchResponse>.self, from: line)
        } catch {
            throw WatchEnd(
                error: EtcdError(.badResponse, endpoints: [endpoint], message: "Could not read a watch line from etcd (\(error)): \(preview(line))"),
                mayGoBetterElsewhere: false)
        }
        if let error = message.error {
            let refusal = refusal(grpcCode: error.grpcCode, message: error.message, status: 200, path: "/v3/watch", endpoint: endpoint)
            throw WatchEnd(error: refusal.error, mayGoBetterElsewhere: refusal.tryNext && !opened.isOpen)
        }
        guard let result = message.result else { return }
        if result.created == true { opened.markOpen() }
        for event in result.events ?? [] {
            let event = event.domain
            guard backlog.add(event) else {
                let after = event.keyValue.modRevision
                throw WatchEnd(
                    error: EtcdError(
                        .fellBehind, endpoints: [endpoint],
                        message:
                            "etcd watch ended: its consumer left \(backlog.waitingBytes) bytes of events untaken and the next, at revision \(after), would pass the client's watch backlog of \(backlog.limit) bytes; watch again from the revision after the last event taken"
                    ),
                    mayGoBetterElsewhere: false)
            }
        }
        if result.canceled == true {
            let why =
                if let compacted = result.compactRevision?.value, compacted > 0 {
                    "the start revision was compacted (the oldest kept is \(compacted))"
                } else {
                    result.cancelReason ?? "no reason given"
                }
            throw WatchEnd(
                error: EtcdError(.rejected(grpcCode: 11, message: why), endpoints: [endpoint], message: "etcd cancelled the watch: \(why)"),
                mayGoBetterElsewhere: false)
        }
    }
}

/// The consumer's side of a watch's stream: takes the backlog's events, and stops the watch's
/// reading when the consuming task is cancelled or the stream is dropped.
private final class WatchConsumer: Sendable {
    private let backlog: WatchBacklog
    private let reader: Task<Void, Never>

    init(backlog: WatchBacklog, reader: Task<Void, Never>) {
        self.backlog = backlog
        self.reader = reader
    }

    deinit { reader.cancel() }

    func next() async throws -> EtcdWatchEvent? {
        let event = try await backlog.next()
        if event == nil, Task.isCancelled { reader.cancel() }
        return event
    }
}

/// Whether a watch's creation line has arrived, shared by its reader and its opening timer.
private final class WatchOpened: Sendable {
    private let opened = Atomic<Bool>(false)

    var isOpen: Bool { opened.load(ordering: .acquiring) }

    func markOpen() { opened.store(true, ordering: .releasing) }
}

/// Reads a watch's answer on the transfers' thread: newline-delimited JSON lines, each handed
/// on as soon as it is whole; or, when the status is not 200, the start of the error body.
private final class WatchAnswerReader: HTTPAnswerReceiver, @unchecked Sendable {
    // Sendable: used by the transfers' thread while the transfer runs, and by the caller
    // only after `HTTPTransfers.perform` has returned; the transfer's ending, stored and read
    // under a lock after the thread's last use, orders the two.

    /// The answer's status code.
    private(set) var status = 0
    /// The start of a refusal's body.
    private(set) var refusalBody = Data()
    /// The bytes of the line not yet whole.
    private var pending: [UInt8] = []
    /// The longest line kept.
    private let limit: Int
    /// Takes each whole line; throwing ends the watch.
    private let line: @Sendable (Data) throws -> Void

    /// A reader of lines up to `limit` bytes, each given to `line`.
    init(limit: Int, line: @escaping @Sendable (Data) throws -> Void) {
        self.limit = limit
        self.line = line
    }

    func receive(status: Int) {
        self.status = status
    }

    func receive(body piece: UnsafeRawBufferPointer) throws {
        guard status == 200 else {
            // Only its start is read: a refusal is one short JSON message.
            refusalBody.append(contentsOf: piece.prefix(max(0, 65536 - refusalBody.count)))
            return
        }
        // Only the new piece is searched: the bytes before it hold no newline.
        var searchFrom = pending.count
        pending.append(contentsOf: piece)
        var lineStart = 0
        while let newline = pending[searchFrom...].firstIndex(of: UInt8(ascii: "\n")) {
            try line(Data(pending[lineStart..<newline]))
            lineStart = newline + 1
            searchFrom = lineStart
        }
        pending.removeFirst(lineStart)
        guard pending.count <= limit else { throw HTTPAnswerCollector.AnswerTooLarge(limit: limit) }
    }

    /// Hands on the last line when the stream ended without a newline after it.
    func readLastLine() throws {
        guard !pending.isEmpty else { return }
        try line(Data(pending))
        pending = []
    }
}
