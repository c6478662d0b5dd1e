/// One HTTP request of the etcd client: a JSON `POST` to etcd's gateway, or a `GET`.
struct HTTPRequest: Sendable {
    /// The request's method.
    enum Method: Sendable {
        case get
        case post
    }

    /// The method.
    var method: Method
    /// The whole URL: an endpoint and a path.
    var url: String
    /// The JSON body of a `POST`; empty for a `GET`.
    var body: [UInt8]
    /// How long connecting may take.
    var connectTimeout: Duration
    /// How long the whole exchange may take, the answer's last byte included; nil for a
    /// request whose answer streams for as long as it is wanted (a watch).
    var timeout: Duration?
    /// Opens a new connection instead of reusing a kept one (the second try of a request
    /// whose kept connection broke).
    var freshConnection = false
}

/// Takes an HTTP answer as it arrives, on the transfers' thread: the status once, before any
/// of the body, then the body in pieces as they come.
///
/// Throwing from either ends the transfer, and ``HTTPTransfers/perform(_:receiver:)`` throws
/// ``HTTPTransferError/refusedByReceiver(_:)`` with the error. Both are called on the one
/// thread that runs every transfer of a client: they must not block.
protocol HTTPAnswerReceiver: AnyObject, Sendable {
    /// The answer's status code, such as 200.
    func receive(status: Int) throws
    /// The next piece of the answer's body; valid only during the call.
    func receive(body: UnsafeRawBufferPointer) throws
}

/// Why an HTTP request did not come to an answer.
enum HTTPTransferError: Error, CustomStringConvertible {
    /// The request's ``HTTPRequest/timeout`` or ``HTTPRequest/connectTimeout`` passed;
    /// libcurl's words for it.
    case timedOut(String)
    /// No connection could be made, or it broke; libcurl's words for it.
    case unreachable(String)
    /// The task waiting for the request was cancelled.
    case cancelled
    /// The client was shut down before the request finished.
    case shutDown
    /// The receiver refused the answer (too large, or not what was expected).
    case refusedByReceiver(any Error)

    var description: String {
        switch self {
        case .timedOut(let why): why
        case .unreachable(let why): why
        case .cancelled: "the request was cancelled"
        case .shutDown: "the etcd client was shut down"
        case .refusedByReceiver(let why): "\(why)"
        }
    }
}
