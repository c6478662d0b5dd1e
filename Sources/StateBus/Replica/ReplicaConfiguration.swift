import Foundation
import Logging

/// How a replica identifies itself and how patient it is.
public struct ReplicaConfiguration: Sendable {
    /// Unique per replica (the host echoes it with the replica's writes). Default: a UUID.
    public var viewID: String
    /// A name for the host's logs, such as the node name.
    public var nodeName: String
    /// How many heartbeat intervals of silence make the replica stale.
    public var missedHeartbeatsBeforeStale: Int
    /// How long a hello may wait for its welcome, or a snapshot for its next part, before it
    /// is asked again (a snapshot arriving part by part may take longer in all).
    public var requestTimeout: Duration
    /// How often liveness (and write deadlines) are checked.
    public var livenessCheckInterval: Duration
    /// How long a write may wait for the host's answer, from the moment it is made: past it,
    /// the write fails with `StateBusError.Code.timeout` and the view shows the host's value
    /// again. The outcome is then unknown (the host may still apply it); the replica shows
    /// whatever the host publishes. Covers time spent disconnected, waiting to be sent.
    public var writeTimeout: Duration
    /// At most this many writes are sent and unanswered at once; later ones wait in the
    /// replica's queue, in order, and go as answers come back (flow control toward the host).
    /// With ``confirmsWritesByEcho`` at most 1,000 apply, whatever is set here.
    public var maxWritesInFlight: Int
    /// The replica's write queue (every write not yet confirmed) holds at most this many
    /// writes. A write past it fails at once with `StateBusError.Code.overloaded` and is not
    /// shown; ``Replica/write(_:waitingUpTo:)`` waits for room instead.
    public var maxQueuedWrites: Int
    /// The same bound in bytes (an estimate of the writes' values).
    public var maxQueuedWriteBytes: Int
    /// How long an action call (``Replica/call(_:arguments:timeout:)``) may take by default,
    /// from the call until the view holds the action's changes (default 30 s). Past it the
    /// call fails with `timeout`; the action may still run on the host.
    public var callTimeout: Duration = .seconds(30)
    /// Action calls waiting or running at once (default 1,000); a call past it fails at once
    /// with `overloaded` and is not sent.
    public var maxCallsInFlight: Int = 1_000
    /// How long the replica's loop thread keeps polling instead of sleeping after it sent a
    /// write or a call, while answers are awaited (default 150 µs; `.zero`: it always sleeps).
    ///
    /// A thread asleep on an idle CPU takes tens of microseconds to wake, a third of a
    /// loopback round trip on a small virtual machine: polling through the round trip brings
    /// a write's confirmation close to a bare libzmq DEALER↔ROUTER round trip. It costs
    /// at most this much of one CPU per write or call that waits for its answer (a burst of
    /// writes keeps the loop busy anyway). The loop never polls busily when it may use only
    /// one CPU (``pinnedCPU``, or a process confined to one CPU), since there it would hold
    /// back libzmq's I/O thread. Not applied on a shared loop (`Replica(…, loop:)`).
    public var busyPollingForAnswers: Duration = .microseconds(150)
    /// How long ``Replica/close()`` (or the release of a replica never closed) waits at most
    /// for its goodbye to leave, once the replica has joined (default 1 s; `.zero`: it does
    /// not wait). A host briefly too busy to answer a new connection (a view that just
    /// reconnected) still hears it, and lists the view no longer; a host that is gone costs a
    /// closing view this long. A replica that never joined does not wait. On a shared loop
    /// (`Replica(…, loop:)`) the goodbye leaves with the loop's other traffic, and nothing
    /// waits for it.
    public var goodbyeLinger: Duration = .seconds(1)
    /// Whether the replica takes the host's publication of its own write as the write's
    /// acceptance, so that the host sends it no separate answer (default `true`).
    ///
    /// The host then sends one message per write instead of two, and every view's copy of
    /// the change leaves the host sooner, with no answer queued ahead of it in libzmq's I/O
    /// thread; only the low-latency profile's own confirmation comes a little later (the
    /// Performance article gives the figures). Refusals, copies and writes that wait for a
    /// commit are still answered. A write whose publication this view lost (its queue at the
    /// host overflowed) is sent again once the view has resynchronised, ahead of any newer
    /// write, and the host answers that copy from its ledger; so at most 1,000 writes are in
    /// flight at once (the ledger keeps a view's last 1,024 answers). A host without
    /// heartbeats answers every write anyway. `false`: every write is answered (PROTOCOL.md,
    /// "Confirmation by echo").
    public var confirmsWritesByEcho = true

    /// The writes in flight at once: ``maxWritesInFlight``, and with confirmation by echo at
    /// most 1,000, so that every write a view may send again after a resync is among the
    /// last 1,024 answers the host's ledger keeps for it (PROTOCOL.md, section 8).
    var writeWindow: Int { confirmsWritesByEcho ? min(maxWritesInFlight, 1_000) : maxWritesInFlight }
    /// The largest message read and the join buffer's size (see ``ReplicaLimits``).
    public var limits = ReplicaLimits()
    /// CURVE keys, for a host that has them (``HostSecurity``); `nil` (the default): none,
    /// as for a host on `ipc://` or loopback without keys.
    public var security: ReplicaSecurity?
    /// The low-latency profile (opt-in): the replica's I/O loop thread and its libzmq I/O
    /// thread both pinned to this CPU. On a machine with few cores a round trip is mostly
    /// thread wake-ups; two threads that share one CPU hand work to each other without a
    /// cross-CPU wake-up, which roughly halves a loopback round trip on 2 cores. Pin the
    /// host to the same CPU (``HostConfiguration/pinnedCPU``) for the full effect. Costs:
    /// the replica never uses another CPU. Ignored when the replica shares a loop
    /// (`Replica(…, loop:)`), whose own setting applies. Default `nil`: not pinned.
    public var pinnedCPU: Int32?
    /// Where the replica logs.
    public var logger: Logger

    /// Creates a configuration.
    /// - Parameters:
    ///   - nodeName: a name for logs (default: the process name).
    ///   - missedHeartbeatsBeforeStale: silent intervals before going stale (default 3).
    ///   - requestTimeout: how long to wait for a welcome, or for a snapshot's next part (default 2 s).
    ///   - writeTimeout: how long a write may wait for its answer (default 30 s).
    ///   - maxWritesInFlight: writes sent and unanswered at once (default 1,000).
    ///   - maxQueuedWrites: writes waiting for confirmation (default 100,000).
    ///   - maxQueuedWriteBytes: the same in bytes (default 64 MiB).
    ///   - logger: where to log.
    public init(
        nodeName: String = ProcessInfo.processInfo.processName,
        missedHeartbeatsBeforeStale: Int = 3,
        requestTimeout: Duration = .seconds(2),
        writeTimeout: Duration = .seconds(30),
        maxWritesInFlight: Int = 1_000,
        maxQueuedWrites: Int = 100_000,
        maxQueuedWriteBytes: Int = 64 << 20,
        logger: Logger = Logger(label: "statebus.replica")
    ) {
        self.viewID = UUID().uuidString
        self.nodeName = nodeName
        self.missedHeartbeatsBeforeStale = max(1, missedHeartbeatsBeforeStale)
        self.requestTimeout = requestTimeout
        self.livenessCheckInterval = .milliseconds(100)
        self.writeTimeout = writeTimeout
        self.maxWritesInFlight = max(1, maxWritesInFlight)
        self.maxQueuedWrites = max(1, maxQueuedWrites)
        self.maxQueuedWriteBytes = max(1, maxQueuedWriteBytes)
        self.logger = logger
    }
}
