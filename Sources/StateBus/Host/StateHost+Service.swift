import ServiceLifecycle

/// A host is a service (swift-service-lifecycle): `run()` serves until a graceful shutdown
/// (SIGTERM or SIGINT, when the service group is told to listen for them) or cancellation,
/// then stops, with the last commit and publication done.
///
/// ```swift
/// let host = try await StateHost(serving: [shared], configuration: HostConfiguration(name: "notes"))
/// let services = ServiceGroup(services: [host], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
/// try await services.run()      // or, inside a group that handles the signals: try await host.run()
/// ```
extension StateHost: Service {
    /// Serves until a graceful shutdown or cancellation, then stops the host.
    public func run() async throws {
        // Either ends the wait: graceful shutdown returns, cancellation throws; both stop.
        defer { stop() }
        try? await gracefulShutdown()
    }
}
