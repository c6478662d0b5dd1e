/// The bounds on what a replica holds for its host: the largest message it reads and what it
/// buffers while it joins. See the "Limits" section of SyncSemantics.md.
public struct ReplicaLimits: Sendable, Hashable {
    /// The largest message the replica reads on either socket (default 64 MiB; libzmq's
    /// `ZMQ_MAXMSGSIZE`). A host that sends more (a snapshot part, a welcome or a publication
    /// larger than this) is disconnected by libzmq before the message is read, and libzmq
    /// does not reconnect such a connection. The replica notices the silence (no answer for
    /// three ``ReplicaConfiguration/requestTimeout``s, or no heartbeat on the updates
    /// connection), reports it in ``Replica/lastError`` with this limit named, and opens a
    /// new connection; it joins once the host's message fits. Keep it above the host's
    /// ``HostLimits/maxObjectBytes`` (4 MiB by default).
    public var maxIncomingMessageBytes: Int
    /// How many bytes of publications the replica keeps while it joins, between subscribing
    /// and applying its snapshot (default 64 MiB). Past it the buffer is dropped and the join
    /// starts again (a new snapshot), so nothing is missed or applied twice; each restart is
    /// counted and logged.
    public var maxJoinBufferBytes: Int
    /// How many publications libzmq queues for the replica before it stops reading the
    /// updates connection (default 100,000; libzmq's `ZMQ_RCVHWM` on the replica's SUB
    /// socket). This is what a replica holds when it falls behind a burst, so it is most of
    /// what a replica costs in memory under load: each publication is at most the host's
    /// ``HostLimits/maxPublicationBytes`` (256 KiB by default; a single larger batch travels
    /// alone), and a stream of small changes, a few hundred bytes each, fills 100,000 of
    /// them with about 20 to 40 MB. Past it the host's queue for this view fills, the host
    /// drops publications past its own bound, and the replica sees the gap and resyncs. A
    /// process holding hundreds of replicas (`statebus load`) gives each a smaller queue.
    public var updatesQueueMessages: Int

    /// Creates limits; every parameter has the default documented on its property.
    public init(maxIncomingMessageBytes: Int = 64 << 20, maxJoinBufferBytes: Int = 64 << 20, updatesQueueMessages: Int = 100_000) {
        self.maxIncomingMessageBytes = maxIncomingMessageBytes
        self.maxJoinBufferBytes = maxJoinBufferBytes
        self.updatesQueueMessages = updatesQueueMessages
    }
}
