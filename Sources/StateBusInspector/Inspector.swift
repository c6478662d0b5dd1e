import Foundation
import ServiceLifecycle
import StateBus
import StateBusHTTP
import StateBusRuntime

/// `statebus inspect`: a web page that is itself a view of a running host. It shows every
/// object and property live (server-sent events), lets a person edit each writable property in
/// place and shows the host's verdict (a rejected edit shows the reason and the field goes
/// back to the host's value), lists the connected views, and charts updates per second and
/// the round trip of the page's edits. Plain HTML, CSS and JavaScript from this module; no
/// build step, nothing from a CDN.
///
/// It is a service: ``run()`` joins the host, serves the page until a graceful shutdown or
/// cancellation, then closes its replicas (they say goodbye).
public final class Inspector: Service, Sendable {
    /// The host's control endpoint.
    public let controlEndpoint: String
    /// Where the page is served.
    public let address: HTTPListenAddress
    private let security: ReplicaSecurity?
    private let joinTimeout: Duration
    private let timeline: InspectorTimeline?
    private let bound = ListeningPort()

    /// Prepares an inspector (started by ``run()``).
    /// - Parameters:
    ///   - controlEndpoint: the host's (or a relay's) control endpoint.
    ///   - address: where to serve the page; port 0 picks a free one (``waitUntilBound(timeout:)``).
    ///   - security: CURVE keys, for a host with keys (the page writes with this key's role).
    ///   - joinTimeout: how long to wait for the host at start.
    ///   - timeline: a recorded history to scrub through (the host is its replay), if any.
    public init(
        controlEndpoint: String, address: HTTPListenAddress, security: ReplicaSecurity? = nil, joinTimeout: Duration = .seconds(10),
        timeline: InspectorTimeline? = nil
    ) {
        self.controlEndpoint = controlEndpoint
        self.address = address
        self.security = security
        self.joinTimeout = joinTimeout
        self.timeline = timeline
    }

    /// Joins the host and serves the page until a graceful shutdown or cancellation.
    /// - Throws: the host's error or a timeout at start; ``HTTPListenAddress/Error`` when it
    ///   cannot listen at ``address``.
    public func run() async throws {
        let model = try await InspectorModel(controlEndpoint: controlEndpoint, security: security, timeout: joinTimeout, timeline: timeline)
        defer { model.close() }
        let routes = InspectorRoutes(model: model)
        var limits = HTTPServer.Limits()
        limits.bodyBytes = InspectorRoutes.maximumBodyBytes
        // Longer than an edit may wait for its verdict, so a slow verdict is still answered.
        limits.idleSeconds = UInt32(InspectorRoutes.answerWait.components.seconds) * 2
        let server = try HTTPServer(address: address, purpose: "serve the inspector", limits: limits) { routes.answer($0) }
        defer {
            // The edits waiting for a verdict first: the server's stop waits for their threads.
            routes.stop()
            server.stop()
        }
        bound.set(server.port)
        // Until the service group shuts down gracefully, or the task is cancelled.
        try? await gracefulShutdown()
    }

    /// Waits until the page is served.
    /// - Returns: the port (the one chosen, for port 0).
    /// - Throws: an error past `timeout`, or `CancellationError`.
    public func waitUntilBound(timeout: Duration = .seconds(30)) async throws -> Int {
        try await bound.wait(upTo: timeout, for: "the inspector at \(address) (is the host at \(controlEndpoint) answering?)")
    }
}
