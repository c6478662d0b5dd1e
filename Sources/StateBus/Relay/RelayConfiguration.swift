import Foundation
import Logging
import StateBusRuntime

/// How a relay joins its upstream (a host, or another relay) and serves its own views.
///
/// A relay is a view of its upstream and a host to its views: it keeps a copy of every
/// object it relays, republishes each publication unchanged (same epoch, same sequences),
/// answers hellos and snapshots from its copy and forwards writes upstream. Views cannot
/// tell it from a host, except that the welcome names the relay.
public struct RelayConfiguration: Sendable {
    /// The control endpoint of the upstream host or relay.
    public var upstreamControlEndpoint: String
    /// A name for logs and the welcome its views get.
    public var name: String
    /// The control endpoint (ROUTER) to bind for views. Default: `ipc://` in the runtime folder.
    public var controlEndpoint: String
    /// The updates endpoint (XPUB) to bind. Default: beside the control endpoint.
    public var updatesEndpoint: String
    /// The updates endpoint to announce to views, when it differs from the bound one (a NAT,
    /// another machine's view of this one). `nil`: the bound endpoint.
    public var advertisedUpdatesEndpoint: String?
    /// The objects to relay; empty (the default): every object the upstream serves.
    public var objects: [String]
    /// The view id the relay uses upstream (default: `relay-` and a UUID).
    public var relayID: String
    /// The largest request the relay accepts from a view (default 4 MiB; the upstream's own
    /// limit applies too, whichever is lower).
    public var maxMessageBytes: Int = 4 << 20
    /// Bounds on subscriptions and on each view's queue of publications, as a host's.
    public var limits = HostLimits()
    /// What one view's unread replies and the requests behind them may hold (default 16 MiB).
    public var maxClientBacklogBytes: Int = 16 << 20
    /// How long a view id stays bound to a silent connection (default 10 s).
    public var viewIDLease: Duration = .seconds(10)
    /// The most view connections the relay keeps state for (default 100,000).
    public var maxClients: Int = 100_000
    /// Writes forwarded upstream and not answered yet (default 100,000). Past it, a write is
    /// refused with `notJoined`, so its view says hello again and sends it later, in order.
    public var maxForwardedWrites: Int = 100_000
    /// How long a forwarded write waits for its upstream answer before the relay forgets it
    /// (default 60 s, past a view's own write deadline).
    public var forwardedWriteTimeout: Duration = .seconds(60)
    /// Hellos and snapshot requests waiting for the relay to catch up with its upstream
    /// (default 10,000). Past it, the oldest is answered with an error and the view retries.
    public var maxParkedRequests: Int = 10_000
    /// How long a hello or snapshot request waits for the relay to catch up (default 30 s).
    public var parkedRequestTimeout: Duration = .seconds(30)
    /// Updates the relay keeps while its snapshot of an object is on the way (default
    /// 64 MiB); past it, it asks for a new snapshot.
    public var maxBufferedUpdateBytes: Int = 64 << 20
    /// How long the relay waits for an answer to its hello upstream, or for the next part of a
    /// snapshot, before asking again (default 5 s). A connection that answers nothing for three times
    /// this while a request waits is replaced (the relay joins again).
    public var upstreamRequestTimeout: Duration = .seconds(5)
    /// The largest message the relay reads from its upstream (default 64 MiB, as a view's
    /// ``ReplicaLimits/maxIncomingMessageBytes``). libzmq drops a connection that brings a
    /// larger one and does not reconnect it; the relay notices the silence (no heartbeat, or
    /// no answer for three ``upstreamRequestTimeout``s), logs it naming this limit, and joins
    /// again, which succeeds once the upstream's messages fit. Keep it above the upstream's
    /// ``HostLimits/maxObjectBytes``.
    public var maxIncomingMessageBytes: Int = 64 << 20
    /// Heartbeat intervals of silence after which the upstream counts as gone and the relay
    /// reconnects (default 3, as a view).
    public var missedHeartbeatsBeforeStale: Int = 3
    /// CURVE towards the upstream: the relay's key pair and the upstream's public key. Needed
    /// when the upstream has keys; it must list the relay's key with the role `relay`.
    public var upstreamSecurity: ReplicaSecurity?
    /// CURVE towards the relay's views: its key pair and the keys it admits, each with a role,
    /// exactly as a host's (``HostSecurity``). With it, the relay may serve a network address.
    public var security: HostSecurity?
    /// Serve a tcp endpoint without ``security``, loopback included (anyone who reaches it,
    /// on loopback every user of the machine, would read and write every object, in clear
    /// text).
    public var allowsInsecureNetwork = false
    /// Where the relay logs.
    public var logger: Logger

    /// Creates a configuration.
    /// - Parameters:
    ///   - upstream: the control endpoint of the host (or relay) to relay.
    ///   - name: the relay's name; default endpoints are derived from it.
    ///   - controlEndpoint: where views connect; default `ipc://<runtime>/<name>.control`.
    ///   - updatesEndpoint: where publications are relayed; default beside the control endpoint.
    ///   - objects: the objects to relay; empty for all.
    ///   - logger: where to log (default: a logger labelled "statebus.relay").
    public init(
        upstream: String,
        name: String = "relay",
        controlEndpoint: String? = nil,
        updatesEndpoint: String? = nil,
        objects: [String] = [],
        logger: Logger = Logger(label: "statebus.relay")
    ) {
        upstreamControlEndpoint = upstream
        self.name = name
        let folder = RuntimeFolder.path
        self.controlEndpoint = controlEndpoint ?? "ipc://\(folder)/\(name).control"
        self.updatesEndpoint = updatesEndpoint ?? HostConfiguration.derivedUpdatesEndpoint(from: controlEndpoint, folder: folder, name: name)
        self.objects = objects
        relayID = "relay-\(UUID().uuidString)"
        self.logger = logger
    }
}
