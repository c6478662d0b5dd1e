import CoreMetrics
import Prometheus
import ServiceLifecycle
import StateBusHTTP
import StateBusRuntime

/// Serves what StateBus records through swift-metrics at `GET /metrics`, in the Prometheus
/// text format (swift-prometheus), over HTTP (libmicrohttpd): what `statebus host`, `relay`,
/// `watch` and the other long-running commands start with `--metrics HOST:PORT`.
///
/// It is a service: run it in the same `ServiceGroup` as the host or relay it reports on, or
/// in a task of its own. Creating one bootstraps swift-metrics with Prometheus (once per
/// process), so create it before the hosts, relays and replicas whose counts it exports.
///
/// ```swift
/// let metrics = try MetricsEndpoint(address: "127.0.0.1:9464")
/// let host = try await StateHost(serving: [model])
/// try await ServiceGroup(services: [host, metrics], gracefulShutdownSignals: [.sigterm], logger: logger).run()
/// ```
public final class MetricsEndpoint: Service, Sendable {
    /// The address asked for.
    public let address: HTTPListenAddress
    private let bound = ListeningPort()

    /// The registry every StateBus metric of this process lands in: swift-metrics is
    /// bootstrapped with it on first use. Round trips and commits take micro- to
    /// milliseconds, so their histograms start at 100 µs (swift-prometheus's default starts
    /// at 5 ms).
    public static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .microseconds(2_500), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1), .milliseconds(2_500), .seconds(5), .seconds(10)
        ]
        factory.valueHistogramBuckets["statebus_host_writes_per_commit"] = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000]
        MetricsSystem.bootstrap(factory)
        return registry
    }()

    /// Prepares an endpoint at `address` (started by ``run()``).
    /// - Parameter address: `HOST:PORT`; port 0 picks a free one (see ``waitUntilBound(timeout:)``).
    /// - Throws: ``HTTPListenAddress/Error`` for an address that is not `HOST:PORT`.
    public convenience init(address: String) throws(HTTPListenAddress.Error) {
        self.init(address: try HTTPListenAddress(parsing: address))
    }

    /// Prepares an endpoint at `address` (started by ``run()``).
    public init(address: HTTPListenAddress) {
        self.address = address
        // Bootstraps swift-metrics now, before the hosts and replicas that record are made:
        // metrics they create before it would go to swift-metrics' default, which drops them.
        _ = Self.registry
    }

    /// Serves until a graceful shutdown or cancellation.
    /// - Throws: ``HTTPListenAddress/Error`` when it cannot listen at ``address`` (a port in
    ///   use, an address that is not this machine's).
    public func run() async throws {
        let registry = Self.registry
        let server = try HTTPServer(address: address, purpose: "serve metrics") { request in
            MetricsResponder.answer(request) { registry.emitToBuffer() }
        }
        defer { server.stop() }
        bound.set(server.port)
        // Until the service group shuts down gracefully, or the task is cancelled.
        try? await gracefulShutdown()
    }

    /// Waits until the server listens.
    /// - Returns: the port it listens on (the one chosen, for port 0).
    /// - Throws: `CancellationError` when cancelled first; an error past `timeout`.
    public func waitUntilBound(timeout: Duration = .seconds(10)) async throws -> Int {
        try await bound.wait(upTo: timeout, for: "the metrics endpoint at \(address)")
    }
}
