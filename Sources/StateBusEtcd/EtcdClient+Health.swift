import AsyncHTTPClient
import Logging
import NIOCore

extension EtcdClient {
    /// Asks the endpoints, in turn, whether etcd is healthy (`GET /health`): it is when one
    /// endpoint has a leader and can make a quorum read.
    /// - Returns: true as soon as one endpoint says it is healthy; false when every endpoint
    ///   that answered said it is not.
    /// - Throws: ``EtcdError`` of kind `unreachable` or `timeout` when no endpoint answered.
    public func health() async throws(EtcdError) -> Bool {
        var answered = false
        var lastReason = "no endpoint was tried"
        var lastKind = EtcdError.Kind.unreachable
        var tried: [String] = []
        let client = httpClient
        let timeout = requestTimeout
        let logger = logger
        for endpoint in endpointsInTryOrder() {
            tried.append(endpoint)
            let request = HTTPClientRequest(url: endpoint + "/health")
            do {
                let body = try await withDeadline(timeout) {
                    let response = try await client.execute(request, timeout: TimeAmount(timeout), logger: logger)
                    return try await response.body.collect(upTo: 4096)
                }
                guard let body else {
                    (lastKind, lastReason) = (.timeout, "\(endpoint) did not answer within \(timeout)")
                    continue
                }
                answered = true
                let text = String(buffer: body)
                if text.contains("\"health\":\"true\"") {
                    endpointAnswered(endpoint)
                    return true
                }
                lastReason = "\(endpoint) is not healthy: \(text)"
            } catch {
                if Task.isCancelled {
                    throw EtcdError(.cancelled, endpoints: [endpoint], message: "etcd health check was cancelled")
                }
                (lastKind, lastReason) = (.unreachable, "\(endpoint) could not be reached: \(error)")
            }
        }
        if answered { return false }
        throw EtcdError(lastKind, endpoints: tried, message: "etcd health check failed at every endpoint tried; the last one: \(lastReason)")
    }
}

extension EtcdClient {
    /// Whether etcd at `endpoint` answers that it is healthy within 5 s (a member that is up
    /// answers at once; a starved machine may take seconds): for waiting on a member just
    /// started. Any failure is a no.
    public static func isHealthy(_ endpoint: String) async -> Bool {
        guard let client = try? EtcdClient(endpoints: [endpoint], requestTimeout: .seconds(5), logger: Logger(label: "statebus.etcd.health"))
        else { return false }
        let healthy = (try? await client.health()) ?? false
        await client.shutdown()
        return healthy
    }
}
