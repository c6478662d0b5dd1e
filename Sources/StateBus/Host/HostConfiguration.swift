import Foundation
import Logging
import StateBusRuntime

/// How a host listens and behaves. The defaults suit one machine.
public struct HostConfiguration: Sendable {
    /// The control endpoint (ROUTER) to bind. Default: `ipc://` in the runtime folder.
    public var controlEndpoint: String
    /// The updates endpoint (XPUB) to bind. Default: `ipc://` beside the control socket.
    public var updatesEndpoint: String
    /// The updates endpoint to announce to views, when it differs from the bound one
    /// (a NAT, a forwarder). `nil`: the bound endpoint, with a wildcard host replaced by
    /// the host the view used to reach the control endpoint.
    public var advertisedUpdatesEndpoint: String?
    /// A name for logs and the welcome.
    public var name: String
    /// How often the host publishes a heartbeat, busy or not; `nil` turns heartbeats off.
    public var heartbeatInterval: Duration?
    /// The largest request the host accepts; larger ones are refused with `tooLarge`.
    public var maxMessageBytes: Int
    /// Properties per snapshot chunk.
    public var snapshotChunkSize: Int
    /// What one client's replies (that it does not read) and the requests waiting behind
    /// them may hold, in bytes (default 16 MiB). Past it the client is dropped: its backlog
    /// is freed, its view id unbound, ``HostStatistics/droppedClients`` counts it, and its
    /// writes time out on its side.
    public var maxClientBacklogBytes: Int = 16 << 20
    /// How long a view id stays bound to a connection that sends nothing (default 10 s):
    /// until then another connection naming it is refused with `viewIDInUse`, unless it
    /// shows the binding's session token or the connection is known to be closed (a view
    /// that crashed usually frees its id at once). Views send a ping when idle, well within it.
    public var viewIDLease: Duration = .seconds(10)
    /// The most connections the host keeps state for (default 100,000); the longest silent
    /// ones without a backlog are forgotten first.
    public var maxClients: Int = 100_000
    /// The most action calls (``Action()``) running at once (default 256). A call past it is
    /// refused with `overloaded` and never runs; the caller may try again later. An action
    /// that never returns holds its place, so this also bounds what such actions can cost.
    public var maxRunningCalls: Int = 256
    /// The bounds on property, object, publication, subscriber-queue and subscription sizes
    /// (see ``HostLimits`` for each default and what happens at it).
    public var limits = HostLimits()
    /// CURVE keys and the authorized keys file: with them both sockets are encrypted and
    /// only listed keys get in, each with its role (see ``HostSecurity``). `nil` (the
    /// default): no encryption, which suits `ipc://` only.
    public var security: HostSecurity?
    /// Serve a tcp endpoint without ``security``, loopback included: by default such a host
    /// refuses to start, since anyone who can reach it (on loopback, every user of the
    /// machine) would read and write every object. Set it (`--insecure`) to accept that
    /// risk; the host then logs a warning at every start.
    public var allowsInsecureNetwork = false
    /// The low-latency profile (opt-in): the host's I/O loop thread and its libzmq I/O
    /// thread both pinned to this CPU (see ``ReplicaConfiguration/pinnedCPU``). Default
    /// `nil`: not pinned. With a context given to the host, only the loop thread is pinned
    /// (the context's I/O threads are placed as it was made).
    public var pinnedCPU: Int32?
    /// How long the host's loop thread keeps polling its sockets instead of sleeping after a
    /// turn in which it handled views' writes (default 100 µs; `.zero`: it always sleeps).
    ///
    /// A view that writes often (a slider, a text field) writes again within a round trip,
    /// and a thread asleep on an idle CPU takes tens of microseconds to wake (on a virtual
    /// machine the CPU itself halts). Polling keeps the host's CPU awake for the next write and
    /// while its publication reaches the views, so that neither waits for a halted CPU to wake
    /// (the Performance article gives the figures). While it polls, the loop yields its CPU to
    /// any thread the kernel queued there. It costs at most this much of one CPU per turn
    /// that handled writes: a host that gets none (only pings, hellos, snapshots) never
    /// polls, and one that gets a write every 200 µs spends about half a CPU. Off on a loop
    /// pinned to one CPU (``pinnedCPU``), where it would hold back libzmq's I/O thread.
    public var busyPollingAfterWrites: Duration = .microseconds(100)
    /// Where persisted properties are kept (default: a file per host name in the per-user
    /// state folder, opened only if an object has persisted properties).
    public var persistence: Persistence
    /// How long a commit waits for a lock another process holds on the database (a backup,
    /// a `sqlite3` shell) before its writes fail with `persistenceFailed` (default 2 s).
    /// The host goes on serving meanwhile: commits run on a thread of their own.
    public var databaseLockTimeout: Duration = .seconds(2)
    /// Where the host logs.
    public var logger: Logger
    /// For a host of a high-availability group: whether it leads now (its election opens
    /// and closes the gate). `nil`: the host always serves.
    package var leadership: LeadershipGate?
    /// A store that is not a local file, used instead of ``persistence`` (a
    /// high-availability group keeps its persisted properties in etcd). `nil`: as
    /// ``persistence`` says.
    package var propertyStore: PropertyStoreOpener?

    /// Creates a configuration.
    /// - Parameters:
    ///   - name: the host's name; default endpoints are derived from it.
    ///   - controlEndpoint: where views connect; default `ipc://<runtime>/<name>.control`.
    ///   - updatesEndpoint: where updates are published; default `ipc://<runtime>/<name>.updates`.
    ///   - heartbeatInterval: heartbeat interval, busy or not (default 500 ms); `nil` disables.
    ///   - maxMessageBytes: largest accepted request (default 4 MiB).
    ///   - persistence: where persisted properties are kept (default ``Persistence/automatic``).
    ///   - logger: where to log (default: a logger labelled "statebus.host").
    public init(
        name: String = "statebus",
        controlEndpoint: String? = nil,
        updatesEndpoint: String? = nil,
        heartbeatInterval: Duration? = .milliseconds(500),
        maxMessageBytes: Int = 4 << 20,
        persistence: Persistence = .automatic,
        logger: Logger = Logger(label: "statebus.host")
    ) {
        self.persistence = persistence
        self.name = name
        let folder = RuntimeFolder.path
        self.controlEndpoint = controlEndpoint ?? "ipc://\(folder)/\(name).control"
        self.updatesEndpoint = updatesEndpoint ?? Self.derivedUpdatesEndpoint(from: controlEndpoint, folder: folder, name: name)
        self.heartbeatInterval = heartbeatInterval
        self.maxMessageBytes = maxMessageBytes
        self.snapshotChunkSize = 1000
        self.logger = logger
    }

    /// The updates endpoint that goes with a control endpoint: the same transport.
    static func derivedUpdatesEndpoint(from control: String?, folder: String, name: String) -> String {
        guard let control else { return "ipc://\(folder)/\(name).updates" }
        if control.hasPrefix("tcp://"), let colon = control.lastIndex(of: ":") {
            return String(control[..<colon]) + ":*"
        }
        if control.hasPrefix("ipc://") { return control + ".updates" }
        if control.hasPrefix("inproc://") { return control + ".updates" }
        return "ipc://\(folder)/\(name).updates"
    }
}
