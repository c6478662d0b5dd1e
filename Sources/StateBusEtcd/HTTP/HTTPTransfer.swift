import CCurl
import StateBusRuntime
import Synchronization

/// One request on its way: its libcurl easy handle while it runs, and the task waiting for it.
final class HTTPTransfer: @unchecked Sendable {
    // Sendable: `request`, `receiver`, `cancelled` and `result` are immutable, Sendable,
    // atomic or a lock. The rest is touched by one thread at a time: the caller sets `waiter`
    // before it queues the transfer (the inbox's lock orders that before the transfers'
    // thread takes it), and from then on only the transfers' thread reads or writes it, until
    // it stores `result` and resumes `waiter`, once. The caller reads `result` under its lock
    // after that (and `brokeOnKeptConnection` after `result`), which orders every write the
    // transfers' thread made (the receiver's too) before the caller's reads, in a way
    // ThreadSanitizer sees as well.

    /// What to send.
    let request: HTTPRequest
    /// Who takes the answer.
    let receiver: any HTTPAnswerReceiver
    /// Set when the waiting task is cancelled, so that a transfer queued after its
    /// cancellation never starts.
    let cancelled = Atomic<Bool>(false)
    /// The task waiting for the transfer's end.
    var waiter: CheckedContinuation<Void, Never>?
    /// How the transfer ended, once it has.
    private let result = Locked<Result<Void, HTTPTransferError>?>(nil)
    /// The easy handle, while the transfer runs.
    private(set) var handle: UnsafeMutableRawPointer?
    /// The request's header lines, owned until the handle is freed.
    private var headers: UnsafeMutablePointer<curl_slist>?
    /// Where libcurl writes what went wrong, in its words.
    private let errorText: UnsafeMutablePointer<CChar>
    /// Whether the receiver has had the status.
    private var statusDelivered = false
    /// Why the receiver ended the transfer.
    private var receiverError: (any Error)?

    /// A transfer of `request`, whose answer goes to `receiver`.
    init(_ request: HTTPRequest, receiver: any HTTPAnswerReceiver) {
        self.request = request
        self.receiver = receiver
        errorText = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorText.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        freeHandle()
        errorText.deallocate()
    }

    /// Makes and sets up the easy handle.
    /// - Returns: the handle, or why libcurl would not take the request.
    func makeHandle() -> Result<UnsafeMutableRawPointer, HTTPTransferError> {
        guard let easy = curl_easy_init() else { return .failure(.unreachable("libcurl could not make a handle")) }
        handle = easy
        headers = curl_slist_append(headers, "Content-Type: application/json")
        // A POST body of 1 MiB or more would otherwise wait for "100 Continue" first.
        headers = curl_slist_append(headers, "Expect:")
        let opaqueSelf = Unmanaged.passUnretained(self).toOpaque()
        var codes: [CURLcode] = [
            ccurl_set_string(easy, CURLOPT_URL, request.url),
            ccurl_allow_http_only(easy),
            ccurl_abandon_slow_lookups(easy),
            // Straight to the endpoint as given, whatever `http_proxy` or `https_proxy` say:
            // an etcd cluster is reached directly, and a proxy would sit inside its deadlines.
            ccurl_set_string(easy, CURLOPT_PROXY, ""),
            // No signals: the handle runs on a thread that is not the main one.
            ccurl_set_long(easy, CURLOPT_NOSIGNAL, 1),
            ccurl_set_long(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1),
            ccurl_set_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(request.connectTimeout)),
            ccurl_set_pointer(easy, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headers)),
            ccurl_set_pointer(easy, CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(errorText)),
            ccurl_set_write_function(easy, receiveBody),
            ccurl_set_pointer(easy, CURLOPT_WRITEDATA, opaqueSelf)
        ]
        if request.freshConnection {
            codes.append(ccurl_set_long(easy, CURLOPT_FRESH_CONNECT, 1))
        }
        if let timeout = request.timeout {
            codes.append(ccurl_set_long(easy, CURLOPT_TIMEOUT_MS, Self.milliseconds(timeout)))
        }
        if request.method == .post {
            codes.append(ccurl_set_long(easy, CURLOPT_POSTFIELDSIZE, request.body.count))
            // libcurl copies the body: the request's array need not outlive this call.
            if request.body.isEmpty {
                codes.append(ccurl_set_string(easy, CURLOPT_COPYPOSTFIELDS, ""))
            } else {
                let copied = request.body.withUnsafeBytes { body in
                    ccurl_set_pointer(easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: body.baseAddress))
                }
                codes.append(copied)
            }
        }
        if let refused = codes.first(where: { $0 != CURLE_OK }) {
            freeHandle()
            return .failure(.unreachable("libcurl refused the request to \(request.url): \(String(cString: curl_easy_strerror(refused)))"))
        }
        return .success(easy)
    }

    /// What the finished transfer came to, from libcurl's result code.
    func outcome(of code: CURLcode) -> Result<Void, HTTPTransferError> {
        if let receiverError { return .failure(.refusedByReceiver(receiverError)) }
        switch code {
        case CURLE_OK:
            // An answer without a body has not reached the receiver yet.
            do {
                try deliverStatus()
            } catch {
                return .failure(.refusedByReceiver(error))
            }
            return .success(())
        case CURLE_OPERATION_TIMEDOUT:
            return .failure(.timedOut(libcurlsWords(for: code)))
        default:
            brokeOnKeptConnection = brokeBeforeAnswering(code) && madeNoNewConnection
            return .failure(.unreachable(libcurlsWords(for: code)))
        }
    }

    /// Set when the transfer failed on a kept connection before any answer came: the server
    /// may have closed that connection as it was taken for reuse, so a try on a new one is
    /// worth it. Read by the waiting task after the transfer ended.
    private(set) var brokeOnKeptConnection = false

    /// Whether `code` says the connection failed while sending or before an answer.
    private func brokeBeforeAnswering(_ code: CURLcode) -> Bool {
        !statusDelivered && (code == CURLE_SEND_ERROR || code == CURLE_RECV_ERROR || code == CURLE_GOT_NOTHING)
    }

    /// Whether the transfer ran on a connection it found open rather than one it made.
    private var madeNoNewConnection: Bool {
        guard let handle else { return false }
        var count = 0
        return ccurl_new_connections(handle, &count) == CURLE_OK && count == 0
    }

    /// What libcurl said went wrong: its error buffer, or the code's general text.
    private func libcurlsWords(for code: CURLcode) -> String {
        let detail = String(cString: errorText)
        return detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
    }

    /// Frees the handle (already taken off the multi handle), keeps how the transfer ended and
    /// resumes the waiting task.
    func complete(_ outcome: Result<Void, HTTPTransferError>) {
        freeHandle()
        end(outcome)
    }

    /// Keeps how the transfer ended and resumes the waiting task, touching nothing else: for a
    /// transfer that never reached the transfers' thread, which may still be reading it
    /// (a cancellation queued before the client began to stop).
    func end(_ outcome: Result<Void, HTTPTransferError>) {
        result.withLock { $0 = outcome }
        let waiting = waiter
        waiter = nil
        waiting?.resume()
    }

    /// How the transfer ended: for the waiting task, once it is resumed.
    func ending() -> Result<Void, HTTPTransferError> {
        result.withLock { $0 } ?? .failure(.unreachable("the transfer was resumed before it ended"))
    }

    /// Hands a piece of the body to the receiver, the status first.
    /// - Returns: false when the receiver refused it, which ends the transfer.
    fileprivate func received(_ bytes: UnsafeRawBufferPointer) -> Bool {
        do {
            try deliverStatus()
            try receiver.receive(body: bytes)
            return true
        } catch {
            receiverError = error
            return false
        }
    }

    /// Gives the receiver the answer's status, once.
    private func deliverStatus() throws {
        guard !statusDelivered, let handle else { return }
        statusDelivered = true
        var status = 0
        _ = ccurl_response_code(handle, &status)
        try receiver.receive(status: status)
    }

    private func freeHandle() {
        if let handle { curl_easy_cleanup(handle) }
        handle = nil
        if let headers { curl_slist_free_all(headers) }
        headers = nil
    }

    /// `duration` in whole milliseconds, rounded up, at least 1 (0 would mean no limit).
    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        let rounded = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int(max(1, min(rounded, Int64(Int32.max))))
    }
}

/// libcurl's write callback: `userdata` is the transfer, kept alive by the transfers' thread
/// while its handle runs. Returning less than it was given ends the transfer.
private func receiveBody(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userdata: UnsafeMutableRawPointer?) -> Int {
    guard let userdata else { return 0 }
    let transfer = Unmanaged<HTTPTransfer>.fromOpaque(userdata).takeUnretainedValue()
    let length = size * count
    return transfer.received(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}
