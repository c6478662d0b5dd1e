/// A request to etcd that failed, with what went wrong, where, and what to do about it.
///
/// `kind` is for code that reacts (retry, step down, report); ``description`` is for people.
public struct EtcdError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What went wrong, coarsely enough to decide what to do next.
    public enum Kind: Sendable, Equatable {
        /// No endpoint could be connected to, or every connection broke before an answer.
        case unreachable
        /// An endpoint did not answer within the client's request timeout.
        case timeout
        /// etcd answered and refused the request; `grpcCode` is its gRPC status code
        /// (3 invalid argument, 9 failed precondition, 11 out of range, 14 unavailable, …).
        case rejected(grpcCode: Int, message: String)
        /// The lease named in the request does not exist (expired or revoked).
        case leaseNotFound
        /// etcd answered with something this client could not understand.
        case badResponse
        /// An endpoint given to the client is not a valid `http://host:port` or `https://host:port` URL.
        case badEndpoint
        /// The task that made the request was cancelled before it finished.
        case cancelled
        /// A value given to the client or the election is not valid; the message names it.
        case invalidArgument
        /// A watch's consumer took its events too slowly: the events waiting reached the
        /// client's watch backlog (``EtcdClient/maximumWatchBacklogBytes``), so the watch ended
        /// after them. Watch again from the revision after the last event taken.
        case fellBehind
    }

    /// What went wrong.
    public let kind: Kind
    /// The etcd endpoints involved: the ones tried, in order, or the bad one.
    public let endpoints: [String]
    /// What was being done and why it failed, for people.
    public let message: String

    /// Creates an error.
    /// - Parameters:
    ///   - kind: what went wrong.
    ///   - endpoints: the endpoints involved.
    ///   - message: what was being done and why it failed.
    public init(_ kind: Kind, endpoints: [String], message: String) {
        self.kind = kind
        self.endpoints = endpoints
        self.message = message
    }

    /// The message, the endpoints and what to do, in one line.
    public var description: String {
        let place = endpoints.isEmpty ? "" : " (etcd endpoint\(endpoints.count == 1 ? "" : "s") \(endpoints.joined(separator: ", ")))"
        return "\(message)\(place). \(advice)"
    }

    /// What a person can do about an error of this kind.
    private var advice: String {
        switch kind {
        case .unreachable:
            "Check that etcd is running and listening there (`etcdctl --endpoints URL endpoint health`), or pass the right endpoints."
        case .timeout:
            "etcd may be overloaded, paused or without quorum; check `etcdctl endpoint status`, or raise the request timeout."
        case .rejected:
            "etcd refused the request as sent; its message says why."
        case .leaseNotFound:
            "The lease expired or was revoked; grant a new one."
        case .badResponse:
            "The server may not be etcd 3.4 or later with its v3 JSON gateway at /v3/; check the endpoint."
        case .badEndpoint:
            "Write endpoints as http://HOST:PORT or https://HOST:PORT, comma-separated for several."
        case .cancelled:
            "The caller stopped waiting; nothing to do."
        case .invalidArgument:
            "Correct the value as the message says."
        case .fellBehind:
            "Take a watch's events faster, or create the client with a larger maximumWatchBacklogBytes."
        }
    }
}
