import ServiceLifecycle

/// A relay is a service (swift-service-lifecycle), like ``StateHost``: `run()` relays until a
/// graceful shutdown or cancellation, then stops.
extension StateRelay: Service {
    /// Relays until a graceful shutdown or cancellation, then stops the relay.
    public func run() async throws {
        defer { stop() }
        try? await gracefulShutdown()
    }
}
