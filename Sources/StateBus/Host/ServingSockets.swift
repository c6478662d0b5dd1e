import ZeroMQ

/// The two sockets a party that serves views binds, a host or a relay: the control ROUTER
/// and the updates XPUB, with the options both need, set in one place.
struct ServingSockets {
    /// Requests in, answers out, one connection per view.
    let control: Socket
    /// Publications out, subscriptions in.
    let updates: Socket

    /// Makes both sockets, unbound.
    /// - Parameters:
    ///   - context: the serving loop's context; the sockets belong to that loop's thread.
    ///   - maxMessageBytes: the largest request the party answers (a larger one gets a
    ///     clear `tooLarge` error, so libzmq's own cut-off sits well above it).
    ///   - limits: the bounds of subscriptions and subscriber queues.
    /// - Throws: `ZeroMQError` when libzmq refuses an option.
    init(context: Context, maxMessageBytes: Int, limits: HostLimits) throws {
        control = try Socket(context: context, type: .router)
        updates = try Socket(context: context, type: .xpub)
        // libzmq drops anything above this before we see it; our own, lower limit answers
        // with a clear `tooLarge` error instead.
        try control.set(.maxMessageSize, Int64(maxMessageBytes) * 4 + 4096)
        try control.set(.routerMandatory, true)
        // No handover: a connection never takes over another's routing id. Views do not
        // choose their routing id at all; the socket gives each connection its own, and the
        // view id binds to it at hello (``ClientTable``).
        try control.set(.routerHandover, false)
        // Per client, in libzmq's queue; past it replies wait in the client's backlog.
        try control.set(.sendHighWaterMark, 1_000)
        // No receive limit, on either socket: libzmq 4.3.4 aborts the process when it stops
        // reading a connection because that connection's queue is full, the peer then
        // resets the connection, and the bytes it had read but not decoded hold a ZMTP
        // PING: when the queue drains, the engine answers that PING on a connection it has
        // already torn down (`!_io_error`, stream_engine_base.cpp:331). With no limit it
        // never stops reading. The bound is the serving loop, which reads every connection
        // as fast as it arrives and discards what a client past its backlog sends
        // (``ClientTable/discards(_:)``).
        try control.set(.receiveHighWaterMark, 0)
        try updates.set(.receiveHighWaterMark, 0)
        try updates.set(.xpubVerbose, true)
        // Bounds in bytes (HostLimits): libzmq counts a subscriber's queue in messages, and
        // admits any subscription unless told to pass them to us.
        try updates.set(.xpubManual, true)
        try updates.set(.maxMessageSize, Int64(limits.maxSubscriptionBytes))
        try updates.set(.sendHighWaterMark, Int32(clamping: limits.subscriberQueueMessages))
        try updates.set(.linger, 200)
    }
}
