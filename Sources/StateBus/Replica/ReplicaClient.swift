import Foundation
import Logging
import StateBusRuntime
import StateBusWire
import SwiftProtobuf
import ZeroMQ

/// A replica's protocol engine: the join procedure, ordering, gap and restart handling,
/// liveness, and the write path. Lives on the replica's I/O loop thread only.
///
/// Phases: hello → (welcome) subscribe → (join marker) snapshot → (last chunk) live.
/// Updates that arrive before the snapshot is complete are buffered, then those newer than
/// the snapshot are applied in order, so no update is missed or applied twice.
final class ReplicaClient {
    enum Phase {
        case hello
        case awaitingJoin
        case snapshot
        case live
    }

    let shared: ReplicaShared
    let object: String
    let controlEndpoint: String
    let viewID: String
    let configuration: ReplicaConfiguration
    let thread: LoopThread
    private var dealer: Socket?
    private var subscriber: Socket?
    /// The monitor of the control socket's handshakes (``ReplicaClient/watchHandshakes(of:)``).
    var handshakeMonitor: Socket?
    private(set) var phase = Phase.hello
    private var epoch: UInt64 = 0
    private var helloRequestID: UInt64 = 0
    private var snapshotRequestID: UInt64 = 0
    private var nextRequestID: UInt64 = 1
    private var buffered: JoinBuffer
    /// The snapshot being received, converted chunk by chunk (so no chunk's wire messages
    /// outlive it: a large snapshot is held once, not twice).
    private var snapshotValues: [String: Value] = [:]
    private var snapshotVersions: [String: UInt64] = [:]
    private var nextChunk: UInt32 = 0
    private var lastHeard = ContinuousClock.now
    /// Reconnections for silence in a row: each doubles the silence tolerated before the next
    /// (up to 8 times the first), until the view has been live that long. A host that is
    /// busy rather than gone (its heartbeats late) is then not sent every write in flight
    /// again every few hundred milliseconds, which only kept it busier.
    private var silentReconnects = 0
    /// Whether the view was marked stale while it waits to reconnect.
    private var reportedStale = false
    /// Whether `connect()` ran before: later calls are reconnections (counted).
    private var connectedBefore = false
    private var phaseStarted = ContinuousClock.now
    private var heartbeatInterval: Duration?
    /// The last welcome's token: shown in a hello from a new connection, it proves that our
    /// view id is still ours (``HostConfiguration/viewIDLease``).
    private var sessionToken = Data()
    /// When a request last went to the host: an idle view pings so its view id stays bound.
    private var lastSent = ContinuousClock.now
    private(set) var closed = false
    var logger: Logger { configuration.logger }
    /// Action calls waiting to be sent or answered (``ReplicaClient+Calls``).
    var calls = PendingCalls()
    /// Set when the host refused this connection (`notJoined`): nothing sent on it ran, so
    /// the next connection sends its calls again instead of reporting them interrupted.
    var resendCallsOnReconnect = false

    init(thread: LoopThread, shared: ReplicaShared, object: String, controlEndpoint: String, configuration: ReplicaConfiguration) {
        self.thread = thread
        self.shared = shared
        self.object = object
        self.controlEndpoint = controlEndpoint
        self.viewID = configuration.viewID
        self.configuration = configuration
        buffered = JoinBuffer(maxBytes: configuration.limits.maxJoinBufferBytes)
        let tick = configuration.livenessCheckInterval
        thread.scheduleTimer(after: tick, repeating: tick) { [unowned self] in self.checkLiveness() }
        thread.onShutdown { [unowned self] in self.close() }
    }

    // MARK: Connection

    /// Opens the control socket and says hello.
    func connect() {
        guard !closed else { return }
        if connectedBefore { shared.reconnections.add(1, ordering: .relaxed) }
        connectedBefore = true
        settleSentCalls()
        reportedStale = false
        tearDownSockets()
        do throws(RuntimeFolderError) {
            // A socket in a runtime folder another user controls could be theirs.
            try RuntimeFolder.checkEndpoint(controlEndpoint)
        } catch {
            fail(StateBusError(.unsafeEndpoint, "not connecting to \(controlEndpoint): \(error)", object: object))
            return
        }
        do {
            let dealer = try Socket(context: thread.context, type: .dealer)
            try secure(dealer)
            // No routing id of our own: the host's socket gives each connection one, and the
            // hello binds the view id to it, so no other connection can take our answers.
            try dealer.set(.reconnectInterval, 100)
            try dealer.set(.reconnectIntervalMax, 1000)
            // Room for the window of writes in flight and the few other requests.
            try dealer.set(.sendHighWaterMark, Int32(clamping: configuration.maxWritesInFlight + 1_000))
            try dealer.set(.maxMessageSize, Int64(configuration.limits.maxIncomingMessageBytes))
            watchHandshakes(of: dealer)
            // No ZMTP heartbeats (ZMQ_HEARTBEAT_IVL): libzmq 4.3.4 can abort the whole process
            // in its stream engine when a heartbeat meets a dead peer (libzmq issues 4364,
            // 4841, 3937). Liveness comes from the protocol's own heartbeats instead.
            try dealer.connect(controlEndpoint)
            thread.register(dealer) { [unowned self] in self.controlReadable() }
            self.dealer = dealer
        } catch {
            fail(StateBusError(.other, "cannot connect to \(controlEndpoint): \(error)", object: object))
            return
        }
        sayHello()
    }

    /// Sends a hello on the current connection (the welcome answers the latest one).
    private func sayHello() {
        enter(.hello)
        var hello = Statebus_V1_Hello()
        hello.viewID = viewID
        hello.nodeName = configuration.nodeName
        hello.objects = [object]
        hello.sessionToken = sessionToken
        var request = Statebus_V1_Request()
        request.hello = hello
        helloRequestID = send(request) ?? 0
    }

    private func enter(_ phase: Phase) {
        self.phase = phase
        phaseStarted = .now
        switch phase {
        case .hello: shared.setConnection(shared.inner.withLock { $0.state.hasSnapshot } ? .stale : .connecting)
        case .awaitingJoin, .snapshot: if shared.inner.withLock({ $0.connection }) != .stale { shared.setConnection(.syncing) }
        case .live: shared.setConnection(.live)
        }
    }

    private func tearDownSockets() {
        if let handshakeMonitor {
            thread.unregister(handshakeMonitor)
            handshakeMonitor.close()
        }
        handshakeMonitor = nil
        if let dealer {
            thread.unregister(dealer)
            dealer.close()
        }
        if let subscriber {
            thread.unregister(subscriber)
            subscriber.close()
        }
        dealer = nil
        subscriber = nil
        shared.inner.withLock { $0.state.markAllUnsent() }
    }

    func close() {
        guard !closed else { return }
        if let dealer {
            var request = Statebus_V1_Request()
            var goodbye = Statebus_V1_Goodbye()
            goodbye.viewID = viewID
            request.goodbye = goodbye
            _ = request.requestID
            try? dealer.set(.linger, 100)
            _ = send(request)
        }
        closed = true
        tearDownSockets()
        shared.setConnection(.closed)
        shared.failAll(StateBusError(.closed, "the replica was closed before the host answered", object: object))
        failAllCalls(StateBusError(.closed, "the replica was closed before the host answered the call", object: object))
        shared.feed.finish()
        shared.connectionFeed.finish()
        shared.progress.finish()
        shared.writeOutcomes.finish()
    }

    func fail(_ error: StateBusError) {
        logger.warning("\(error)")
        shared.inner.withLock { $0.lastError = error }
        shared.connectionFeed.notify(["error"])
    }

    /// Sends a request; returns its request id, or `nil` when it could not be queued (no
    /// socket, or the socket's queue is full: the caller keeps what it must send again).
    @discardableResult
    func send(_ request: Statebus_V1_Request) -> UInt64? {
        guard let dealer else { return nil }
        var request = request
        request.protocolVersion = StateBusProtocol.version
        let id = nextRequestID
        nextRequestID += 1
        request.requestID = id
        do {
            let bytes: [UInt8] = try request.serializedBytes()
            // A DEALER queues while the host is unreachable, up to its high-water mark; the
            // window of writes in flight keeps writes well below it.
            lastSent = .now
            guard try dealer.send(bytes, wait: false) else {
                logger.debug("the control socket's queue is full; request \(id) will be sent again")
                return nil
            }
        } catch {
            logger.warning("could not send a request to \(controlEndpoint): \(error)")
            return nil
        }
        return id
    }

    // MARK: Control channel

    private func controlReadable() {
        guard let dealer else { return }
        for _ in 0..<256 {
            // A handler may have replaced the connection: what is left on this one is moot.
            guard self.dealer === dealer, let message = try? dealer.tryReceive() else { return }
            guard !message.hasMore else {
                while (try? dealer.tryReceive())??.hasMore == true {}
                continue
            }
            guard
                let reply = try? message.withUnsafeBytes({ bytes in
                    try Statebus_V1_Reply(serializedBytes: Array(bytes), options: HostServer.decodingOptions)
                })
            else {
                logger.warning("dropped a reply that is not a StateBus message")
                continue
            }
            switch reply.body {
            case .welcome(let welcome): handleWelcome(welcome, requestID: reply.requestID)
            case .snapshotChunk(let chunk): handleChunk(chunk, requestID: reply.requestID)
            case .writeReply(let writeReply): handleWriteReply(writeReply)
            case .callReply(let callReply): handleCallReply(callReply)
            case .error(let error):
                let error = StateBusError(wire: error)
                if reply.requestID == helloRequestID || reply.requestID == snapshotRequestID {
                    fail(error)
                } else {
                    logger.warning("host error: \(error)")
                }
            case .pong, .viewList, .none: break
            }
        }
    }

    private func handleWelcome(_ welcome: Statebus_V1_Welcome, requestID: UInt64) {
        guard phase == .hello, requestID == helloRequestID else { return }
        guard let schema = welcome.objects.first(where: { $0.name == object }) else {
            let served = welcome.objects.map(\.name).joined(separator: ", ")
            fail(StateBusError(.unknownObject, "the host at \(controlEndpoint) serves no object '\(object)'; it serves: \(served)", object: object))
            return
        }
        if epoch != 0 && welcome.epoch != epoch {
            logger.info("host restarted (epoch \(epoch) -> \(welcome.epoch)); resynchronising")
        }
        epoch = welcome.epoch
        sessionToken = welcome.sessionToken
        heartbeatInterval = welcome.heartbeatIntervalMs > 0 ? .milliseconds(Int(welcome.heartbeatIntervalMs)) : nil
        shared.inner.withLock { inner in
            inner.lastError = nil
            inner.schema = Dictionary(uniqueKeysWithValues: schema.properties.map { ($0.name, ValueKind(wire: $0.kind)) })
        }
        let endpoint = Self.reachableEndpoint(welcome.updatesEndpoint, controlEndpoint: controlEndpoint)
        do throws(RuntimeFolderError) {
            try RuntimeFolder.checkEndpoint(endpoint)
        } catch {
            fail(StateBusError(.unsafeEndpoint, "not subscribing to \(endpoint): \(error)", object: object))
            return
        }
        do {
            let subscriber = try Socket(context: thread.context, type: .sub)
            try secure(subscriber)
            try subscriber.set(.receiveHighWaterMark, 100_000)
            try subscriber.set(.maxMessageSize, Int64(configuration.limits.maxIncomingMessageBytes))
            try subscriber.subscribe(Topic.updates(object))
            try subscriber.subscribe(Topic.heartbeat)
            try subscriber.subscribe(Topic.join(viewID))
            try subscriber.connect(endpoint)
            thread.register(subscriber) { [unowned self] in self.updatesReadable() }
            self.subscriber = subscriber
        } catch {
            fail(StateBusError(.other, "cannot subscribe to \(endpoint): \(error)", object: object))
            return
        }
        buffered.reset()
        lastHeard = .now
        enter(.awaitingJoin)
    }

    /// A wildcard host in the announced endpoint (`tcp://0.0.0.0:5556`, `tcp://*:5556`) is
    /// replaced by the host the view used for the control endpoint.
    static func reachableEndpoint(_ announced: String, controlEndpoint: String) -> String {
        UpdatesEndpoint.reachable(announced, controlEndpoint: controlEndpoint)
    }

    private func requestSnapshot() {
        var snapshot = Statebus_V1_SnapshotRequest()
        snapshot.object = object
        var request = Statebus_V1_Request()
        request.snapshot = snapshot
        snapshotValues = [:]
        snapshotVersions = [:]
        nextChunk = 0
        snapshotRequestID = send(request) ?? 0
        enter(.snapshot)
    }

    private func handleChunk(_ chunk: Statebus_V1_SnapshotChunk, requestID: UInt64) {
        guard phase == .snapshot, requestID == snapshotRequestID, chunk.object == object else { return }
        guard chunk.epoch == epoch else {
            // The host restarted since the welcome: a snapshot of the new run needs a new
            // join (hello, subscription, join marker), not another request.
            logger.info("a snapshot chunk of another host epoch (\(chunk.epoch), joined \(epoch)); joining again")
            connect()
            return
        }
        guard chunk.chunkIndex == nextChunk else {
            requestSnapshot()  // a chunk went missing: start over
            return
        }
        nextChunk += 1
        if chunk.chunkIndex == 0 {
            let count = shared.inner.withLock { $0.schema.count }
            snapshotValues.reserveCapacity(count)
            snapshotVersions.reserveCapacity(count)
        }
        for part in chunk.properties {
            snapshotValues[part.name] = Value(wire: part.value)
            snapshotVersions[part.name] = part.version
        }
        guard chunk.last else { return }
        let (values, versions) = (snapshotValues, snapshotVersions)
        snapshotValues = [:]
        snapshotVersions = [:]
        shared.update { $0.applySnapshot(epoch: chunk.epoch, sequence: chunk.sequence, values: values, versions: versions) }
        shared.appliedSnapshots.add(1, ordering: .relaxed)
        enter(.live)
        let backlog = buffered.take()
        defer { shared.progress.notify(["sequence"]) }
        guard apply(backlog.filter { $0.sequence > chunk.sequence }) else { return }
        flushWrites()
    }

    private func handleWriteReply(_ reply: Statebus_V1_WriteReply) {
        if !reply.accepted, reply.rejection.code == .notJoined || reply.rejection.code == .viewIDInUse {
            // The host does not hold this connection as ours: ZeroMQ reconnected the socket
            // underneath us (the host restarted, or the connection dropped) and sent what was
            // queued on it. Nothing was applied. A new connection and hello, and every
            // unanswered write goes again there, in order; the receipt stays open.
            logger.info("the host at \(controlEndpoint) does not know this connection (\(reply.rejection.code)); saying hello again")
            resendCallsOnReconnect = true
            connect()
            return
        }
        if reply.accepted {
            shared.complete(writeID: reply.writeID, with: .success(reply.sequence))
        } else {
            let error = StateBusError(wire: reply.rejection)
            shared.complete(writeID: reply.writeID, with: .failure(error))
            shared.rejections.notify([error.description])
        }
        // An answer frees a place in the window of writes in flight.
        flushWrites()
    }

    // MARK: Updates channel

    private func updatesReadable() {
        guard let subscriber else { return }
        let appliedBefore = shared.appliedUpdates.load(ordering: .relaxed)
        defer {
            if shared.appliedUpdates.load(ordering: .relaxed) != appliedBefore { shared.progress.notify(["sequence"]) }
        }
        for _ in 0..<512 {
            guard let frames = try? subscriber.tryReceiveMultipart() else { return }
            lastHeard = .now
            if reportedStale {
                reportedStale = false
                if phase == .live { shared.setConnection(.live) }
            }
            guard frames.count == 2,
                let publication = try? frames[1].withUnsafeBytes({ bytes in
                    try Statebus_V1_Publication(serializedBytes: Array(bytes), options: HostServer.decodingOptions)
                })
            else { continue }
            if publication.hasJoinMarker {
                guard phase == .awaitingJoin, publication.joinMarker.viewID == viewID else { continue }
                try? subscriber.unsubscribe(Topic.join(viewID))
                requestSnapshot()
                continue
            }
            if publication.hasHeartbeat {
                handleHeartbeat(publication.heartbeat)
                continue
            }
            let batches = publication.updates.filter { $0.object == object }
            if phase != .live {
                if !buffered.append(batches, bytes: frames[1].count) { restartJoin() }
            } else {
                _ = apply(batches)
            }
        }
    }

    /// Applies batches in order, all under one lock and with one change notification, so
    /// observers see the publication whole and the cost is per message, not per batch.
    /// Batches already in the snapshot are skipped; at a new epoch or a sequence gap it stops
    /// (what came before stays applied) and starts resynchronising.
    /// - Returns: `false` when it started a resync (later batches must not be applied).
    private func apply(_ batches: [Statebus_V1_UpdateBatch]) -> Bool {
        guard !batches.isEmpty else { return true }
        enum Interruption {
            case newEpoch
            case gap(have: UInt64, next: Statebus_V1_UpdateBatch)
        }
        var interruption: Interruption?
        var applied = 0
        var echoes: [(writeID: UInt64, sequence: UInt64)] = []
        let epoch = self.epoch
        let viewID = self.viewID
        shared.update { state in
            var changed = Set<String>()
            for batch in batches {
                guard batch.epoch == epoch else {
                    interruption = .newEpoch
                    break
                }
                if batch.sequence <= state.sequence { continue }  // already in the snapshot
                guard batch.sequence == state.sequence + 1 else {
                    interruption = .gap(have: state.sequence, next: batch)
                    break
                }
                let changes = batch.changes.map(PropertyChange.init(wire:))
                if batch.origin == viewID, batch.writeID != 0 { echoes.append((batch.writeID, batch.sequence)) }
                state.applyBatch(
                    sequence: batch.sequence, changes: changes, origin: batch.origin, writeID: batch.writeID, myViewID: viewID, changed: &changed)
                applied += 1
            }
            return changed
        }
        if applied > 0 { shared.appliedUpdates.add(applied, ordering: .relaxed) }
        // The echo of this view's own write is the host's acceptance too: it resolves the
        // receipt even if the reply itself is late or lost (the reply then finds nothing).
        if !echoes.isEmpty {
            for echo in echoes { shared.complete(writeID: echo.writeID, with: .success(echo.sequence)) }
            flushWrites()
        }
        switch interruption {
        case nil:
            return true
        case .newEpoch:
            logger.info("updates from a new host epoch; reconnecting")
            connect()
            return false
        case .gap(let have, let next):
            logger.info("sequence gap (have \(have), got \(next.sequence)); resynchronising")
            shared.sequenceGaps.add(1, ordering: .relaxed)
            resync(keeping: next)
            return false
        }
    }

    private func resync(keeping batch: Statebus_V1_UpdateBatch? = nil) {
        buffered.reset(keeping: batch)
        requestSnapshot()
    }

    /// The join buffer passed its bound (and is now empty): during the snapshot, ask for a
    /// new one, since what was dropped may be newer than it; while waiting for the join
    /// marker, the snapshot still to come covers what was dropped.
    private func restartJoin() {
        let restarts = shared.restartedJoins.add(1, ordering: .relaxed).newValue
        logger.warning(
            "more than \(buffered.maxBytes) bytes of updates arrived while joining (ReplicaLimits.maxJoinBufferBytes); dropped them and restarting the join (restart \(restarts))"
        )
        if phase == .snapshot { requestSnapshot() }
    }

    private func handleHeartbeat(_ heartbeat: Statebus_V1_Heartbeat) {
        if heartbeat.epoch != epoch {
            logger.info("heartbeat from a new host epoch; reconnecting")
            connect()
            return
        }
        guard phase == .live, let announced = heartbeat.sequences.first(where: { $0.object == object }) else { return }
        let current = shared.inner.withLock { $0.state.sequence }
        if announced.sequence > current {
            logger.info("missed updates up to \(announced.sequence) (have \(current)); resynchronising")
            shared.sequenceGaps.add(1, ordering: .relaxed)
            resync()
        }
    }

    // MARK: Liveness

    private func checkLiveness() {
        guard !closed else { return }
        expireWrites()
        expireCalls()
        flushWrites()
        let now = ContinuousClock.now
        // Well within the host's view-id lease (10 s by default), so it stays ours.
        if phase == .live, now - lastSent > configuration.requestTimeout {
            var request = Statebus_V1_Request()
            request.ping = Statebus_V1_Ping()
            send(request)
        }
        switch phase {
        case .live, .awaitingJoin:
            // Heartbeats keep `lastHeard` fresh, so a join marker that never came needs its
            // own deadline.
            if phase == .awaitingJoin, now - phaseStarted > configuration.requestTimeout {
                logger.info("no join marker within \(configuration.requestTimeout); reconnecting")
                connect()
                return
            }
            guard let interval = heartbeatInterval else { return }
            let silence = interval * configuration.missedHeartbeatsBeforeStale
            if phase == .live, now - phaseStarted > silence * 8 { silentReconnects = 0 }
            guard now - lastHeard > silence else { return }
            // Silence is the host's only when nothing waits to be read: after this process
            // was starved of CPU, this timer can run before the updates that did arrive.
            updatesReadable()
            guard now - lastHeard > silence, !closed, phase == .live || phase == .awaitingJoin else { return }
            // Stale at once (the documented time); the reconnection waits longer after
            // reconnections in a row, and a late heartbeat meanwhile makes the view live again.
            if !reportedStale {
                reportedStale = true
                shared.setConnection(.stale)
            }
            if now - lastHeard > silence * (1 << min(silentReconnects, 3)) {
                logger.info("no heartbeat for \(now - lastHeard); the replica is stale, reconnecting")
                silentReconnects += 1
                connect()
            }
        case .hello, .snapshot:
            if now - phaseStarted > configuration.requestTimeout {
                // Asked again on the same connection: libzmq reconnects it by itself, and a
                // new connection would look like another replica to the host, which keeps
                // our view id for the old one until its lease ends (a slow first welcome
                // used to cost a whole lease).
                if phase == .snapshot { requestSnapshot() } else if dealer != nil { sayHello() } else { connect() }
            }
        }
    }

    // MARK: Writes

    /// Sends writes made since the last call, in order, as long as fewer than
    /// ``ReplicaConfiguration/maxWritesInFlight`` are unanswered (only when live: before
    /// that, they wait). A write the socket will not take now stays queued and goes on the
    /// next call: after an answer, an expiry or a liveness tick.
    func flushWrites() {
        sendWrites()
        flushCalls()
    }

    private func sendWrites() {
        guard phase == .live else { return }
        let window = configuration.maxWritesInFlight
        let unsent = shared.inner.withLock { $0.state.takeUnsent(limit: window - $0.state.inFlight) }
        for (index, write) in unsent.enumerated() {
            var body = Statebus_V1_WriteRequest()
            body.object = object
            body.writeID = write.id
            body.viewID = viewID
            body.changes = write.changes.map(\.wire)
            var request = Statebus_V1_Request()
            request.write = body
            guard send(request) != nil else {
                // Not queued: it and every later one stay unsent, so order is kept.
                shared.inner.withLock { inner in
                    for later in unsent[index...] { inner.state.markUnsent(later.id) }
                }
                return
            }
        }
    }

    /// Fails the writes whose deadline passed without an answer, with `timeout`.
    private func expireWrites() {
        let error = StateBusError(
            .timeout,
            "the host did not answer the write within \(configuration.writeTimeout) (ReplicaConfiguration.writeTimeout); "
                + "it may or may not have been applied: the view shows the host's value", object: object)
        let expired = shared.expireWrites(at: .now, with: error)
        if expired > 0 {
            logger.warning("\(expired) writes to \(object) timed out after \(configuration.writeTimeout) without an answer from \(controlEndpoint)")
        }
    }
}
