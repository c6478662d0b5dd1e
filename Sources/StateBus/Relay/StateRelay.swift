import Logging
import ZeroMQ

/// A relay: joins an upstream host (or relay) and serves its objects to views of its own,
/// so the host pays for one connection instead of one per view.
///
/// It keeps a copy of each relayed object, republishes every publication unchanged (same
/// epoch, same sequences, same bytes), answers hellos and snapshots from its copy, and
/// forwards writes upstream and their answers back. Relays chain. When the upstream goes
/// away, its views go stale as they would with the host itself; when it returns (a new
/// epoch included), the relay joins again and its views resynchronise through it.
///
/// ```swift
/// let relay = try await StateRelay(configuration: RelayConfiguration(
///     upstream: "tcp://10.0.0.1:5555", controlEndpoint: "tcp://127.0.0.1:6555"))
/// try await relay.waitUntilSynced(timeout: .seconds(10))
/// // Views connect to relay.controlEndpoint exactly as they would to the host.
/// ```
///
/// All methods are thread-safe.
public final class StateRelay: Sendable {
    /// The control endpoint views connect to (the real port for `tcp://…:*`).
    public let controlEndpoint: String
    /// The updates endpoint bound.
    public let updatesEndpoint: String

    let loop: IOLoop
    let server: LoopBound<RelayServer>
    let counters = RelayCounters()

    /// Starts a relay: binds its sockets and joins its upstream (without waiting for it;
    /// views that come before the relay has caught up wait for it).
    /// - Throws: `StateBusError.unsafeEndpoint` for a network endpoint without
    ///   ``RelayConfiguration/allowsInsecureNetwork``; `ZeroMQError` when a bind fails.
    public init(configuration: RelayConfiguration, context: Context? = nil) async throws {
        let loop = try IOLoop(context: try context ?? Context(), name: "statebus-relay")
        let counters = self.counters
        do {
            server = try await loop.submit { thread in
                LoopBound(try RelayServer(thread: thread, configuration: configuration, counters: counters), on: thread)
            }
        } catch {
            loop.shutdown()
            throw error
        }
        let endpoints = try await loop.submit { [server] _ in (server.value.controlEndpoint, server.value.updatesEndpoint) }
        self.loop = loop
        controlEndpoint = endpoints.0
        updatesEndpoint = endpoints.1
        configuration.logger.info(
            "relay started", metadata: ["control": "\(controlEndpoint)", "upstream": "\(configuration.upstreamControlEndpoint)"])
    }

    deinit { loop.shutdown() }

    /// Whether every relayed object's copy holds the upstream's current state.
    public var isSynced: Bool { counters.synced.load(ordering: .relaxed) }

    /// Waits until the relay has joined its upstream and holds every relayed object.
    /// - Throws: `StateBusError.timeout` when that takes longer than `timeout`.
    public func waitUntilSynced(timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while !isSynced {
            guard ContinuousClock.now < deadline else {
                throw StateBusError(.timeout, "the relay at \(controlEndpoint) did not catch up with its upstream within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// What the relay has done so far.
    public var statistics: RelayStatistics { counters.snapshot }

    /// Stops relaying: closes every socket. Its views notice through missing heartbeats.
    /// Safe to call more than once.
    public func stop() { loop.shutdown() }
}
