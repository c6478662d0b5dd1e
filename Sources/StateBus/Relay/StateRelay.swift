import Logging
import StateBusRuntime
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
        try await waitFor(timeout: timeout, "the relay at \(controlEndpoint) to catch up with its upstream") { $0.isSynced }
    }

    /// Waits until `condition` holds, checking it now and whenever the relay's state changes
    /// (it catches up with its upstream, falls behind, or joins it again), up to `timeout`.
    ///
    /// ```swift
    /// let before = relay.statistics.upstreamReconnects
    /// try await relay.waitFor(timeout: .seconds(30), "a new join") { $0.statistics.upstreamReconnects > before }
    /// ```
    /// - Throws: `StateBusError.timeout` naming `what` and the relay's statistics when the
    ///   deadline passes or the relay stops first; whatever `condition` throws.
    public func waitFor(timeout: Duration, _ what: String, _ condition: @escaping @Sendable (StateRelay) throws -> Bool) async throws {
        // Subscribed before the first check, so no event between the two is missed.
        let events = ChangeFeed.Registration(feed: counters.events)
        if try condition(self) { return }
        let met = try await withDeadline(timeout) { [self] in
            while await events.next() != nil { if try condition(self) { return true } }
            return try condition(self)  // the relay stopped
        }
        // `met` is nil when the deadline passed first.
        let holds = try met == true || condition(self)
        guard holds else {
            throw StateBusError(.timeout, "timed out after \(timeout) waiting for \(what); the relay has \(statistics)")
        }
    }

    /// What the relay has done so far.
    public var statistics: RelayStatistics { counters.snapshot }

    /// Stops relaying: closes every socket. Its views notice through missing heartbeats.
    /// Safe to call more than once.
    public func stop() {
        loop.shutdown()
        counters.events.finish()
    }
}
