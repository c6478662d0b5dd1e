import Foundation
import Logging

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
        for endpoint in endpointsInTryOrder() {
            tried.append(endpoint)
            let answer: (status: Int, body: Data)
            do {
                answer = try await transfers.exchange(request(.get, "/health", at: endpoint), limit: 4096)
            } catch {
                switch error {
                case .cancelled:
                    throw EtcdError(.cancelled, endpoints: [endpoint], message: "etcd health check was cancelled")
                case .shutDown:
                    throw EtcdError(.cancelled, endpoints: [endpoint], message: "etcd health check was ended: the client was shut down")
                case .timedOut(let why):
                    (lastKind, lastReason) = (.timeout, "\(endpoint) did not answer within \(requestTimeout) (\(why))")
                case .unreachable(let why):
                    (lastKind, lastReason) = (.unreachable, "\(endpoint) could not be reached: \(why)")
                case .refusedByReceiver(let why):
                    answered = true
                    lastReason = "\(endpoint) answered /health with something else: \(why)"
                }
                continue
            }
            answered = true
            let text = String(decoding: answer.body, as: UTF8.self)
            if answer.status == 200, text.contains("\"health\":\"true\"") {
                endpointAnswered(endpoint)
                return true
            }
            lastReason = "\(endpoint) is not healthy: HTTP \(answer.status) \(text)"
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
