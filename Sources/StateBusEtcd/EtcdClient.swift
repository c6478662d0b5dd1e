import Foundation
import Logging
import StateBusRuntime

/// A client of etcd's v3 API through its JSON gateway (`POST /v3/...`), for etcd 3.4 or later.
///
/// Every call has a client-side deadline per endpoint (``requestTimeout``): etcd's own timeout
/// is over 5 s and a paused or partitioned server answers nothing at all. When an endpoint
/// cannot be reached, does not answer in time, or answers that it has no leader (HTTP 503),
/// the call moves on to the next endpoint, trying each at most once; the last endpoint that
/// answered is tried first next time. Any other refusal is thrown at once.
///
/// A call that timed out may still have been applied: re-read before retrying a write that is
/// not idempotent.
///
/// The client sends its requests with libcurl, on one thread of its own, and keeps their
/// connections open for reuse. Call ``shutdown()`` when done with it: that ends its open
/// watches and its thread at once (an open watch keeps the client alive until then; a client
/// released with none open stops its thread too).
///
/// Thread safety: all methods may be called from any task or thread at once.
public final class EtcdClient: Sendable {
    /// The endpoints, validated, in the order given.
    public let endpoints: [String]
    /// How long one endpoint has to answer one request.
    public let requestTimeout: Duration
    let logger: Logger
    let transfers: HTTPTransfers
    /// The index of the endpoint that answered last, which is tried first.
    private let preferredEndpoint = Locked<Int>(0)

    /// The largest answer body the client reads.
    static let maximumBodyBytes = 64 << 20

    /// The most bytes of events one watch keeps for a consumer that has not taken them (each
    /// event counts its key, its value and 64 bytes): past it, the watch ends with an
    /// ``EtcdError`` of kind `fellBehind` after the events already kept.
    public let maximumWatchBacklogBytes: Int

    /// Creates a client.
    /// - Parameters:
    ///   - endpoints: etcd client URLs, such as `http://127.0.0.1:2379` (see
    ///     ``EtcdEndpoints/parse(_:)`` for a comma-separated list).
    ///   - requestTimeout: how long one endpoint has to answer one request; a call may take
    ///     up to this times the number of endpoints.
    ///   - logger: where the client logs failovers (at debug level).
    ///   - maximumWatchBacklogBytes: the most bytes of events a watch keeps for a consumer
    ///     that has not taken them (see ``maximumWatchBacklogBytes``).
    /// - Throws: ``EtcdError`` of kind `badEndpoint` when the list is empty or an endpoint is
    ///   not a valid URL, naming it, or the backlog is not positive.
    public init(
        endpoints: [String], requestTimeout: Duration = .seconds(1), logger: Logger, maximumWatchBacklogBytes: Int = 16 << 20
    ) throws(EtcdError) {
        guard !endpoints.isEmpty else {
            throw EtcdError(.badEndpoint, endpoints: [], message: "No etcd endpoint given")
        }
        var validated: [String] = []
        for endpoint in endpoints {
            let valid = try EtcdEndpoints.validate(endpoint)
            if !validated.contains(valid) { validated.append(valid) }
        }
        guard requestTimeout > .zero else {
            throw EtcdError(.badEndpoint, endpoints: validated, message: "The etcd request timeout must be positive, not \(requestTimeout)")
        }
        guard maximumWatchBacklogBytes > 0 else {
            throw EtcdError(
                .invalidArgument, endpoints: validated, message: "The watch backlog must be positive, not \(maximumWatchBacklogBytes) bytes")
        }
        self.endpoints = validated
        self.requestTimeout = requestTimeout
        self.maximumWatchBacklogBytes = maximumWatchBacklogBytes
        self.logger = logger
        do {
            transfers = try HTTPTransfers()
        } catch {
            throw EtcdError(.unreachable, endpoints: validated, message: "The etcd client could not start: \(error)")
        }
    }

    /// Ends the client's open requests and watches (as cancelled) and its thread, which
    /// closes its connections. Call it when done; a second call does nothing.
    public func shutdown() async {
        transfers.shutdown()
    }

    /// A request to `endpoint`: connecting may take the request timeout, and so may the whole
    /// exchange unless it is a stream (`timeout` nil).
    func request(_ method: HTTPRequest.Method, _ path: String, at endpoint: String, body: [UInt8] = [], streaming: Bool = false) -> HTTPRequest {
        HTTPRequest(
            method: method, url: endpoint + path, body: body, connectTimeout: requestTimeout, timeout: streaming ? nil : requestTimeout)
    }

    /// The endpoints in the order one call tries them: the last one that answered first.
    func endpointsInTryOrder() -> [String] {
        let first = preferredEndpoint.withLock { $0 }
        return (0..<endpoints.count).map { endpoints[(first + $0) % endpoints.count] }
    }

    /// Remembers that `endpoint` answered, so that the next call starts there.
    func endpointAnswered(_ endpoint: String) {
        guard let index = endpoints.firstIndex(of: endpoint) else { return }
        preferredEndpoint.withLock { $0 = index }
    }
}
