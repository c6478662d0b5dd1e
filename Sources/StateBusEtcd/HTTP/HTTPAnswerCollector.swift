import Foundation

/// Keeps a whole HTTP answer, up to a size: the receiver of a unary request.
final class HTTPAnswerCollector: HTTPAnswerReceiver, @unchecked Sendable {
    // Sendable: `status` and `body` are written only by the transfers' thread while the
    // transfer runs, and read by the caller only after `HTTPTransfers.perform` has returned;
    // the transfer's ending, stored and read under a lock after the last write, orders the two.

    /// The answer's status code, 0 until it arrives.
    private(set) var status = 0
    /// The answer's body so far.
    private(set) var body = Data()
    /// The largest body kept; a larger one ends the transfer.
    let limit: Int

    /// A collector of answers up to `limit` bytes.
    init(limit: Int) {
        self.limit = limit
    }

    func receive(status: Int) {
        self.status = status
    }

    func receive(body piece: UnsafeRawBufferPointer) throws {
        guard body.count + piece.count <= limit else { throw AnswerTooLarge(limit: limit) }
        body.append(contentsOf: piece)
    }

    /// An answer longer than the collector keeps.
    struct AnswerTooLarge: Error, CustomStringConvertible {
        /// The collector's limit.
        var limit: Int

        var description: String { "the answer is longer than \(limit) bytes" }
    }
}

extension HTTPTransfers {
    /// Sends `request` and returns its whole answer, refusing one longer than `limit` bytes.
    func exchange(_ request: HTTPRequest, limit: Int) async throws(HTTPTransferError) -> (status: Int, body: Data) {
        let collector = HTTPAnswerCollector(limit: limit)
        try await perform(request, receiver: collector)
        return (collector.status, collector.body)
    }
}
