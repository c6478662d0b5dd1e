import Foundation
import Logging
import StateBusRuntime
import StateBusWire
import SwiftProtobuf
import ZeroMQ

/// A replica's protocol engine (protocol version 2): the join procedure, ordering, gap and
/// restart handling, liveness, and the write path. Lives on the replica's I/O loop thread
/// only.
///
/// Phases: hello → (welcome) subscribe → (join marker) snapshot → (last part) live.
/// Runs of updates that arrive before the snapshot is complete are kept, then the batches
/// newer than the snapshot are applied in order, so no update is missed or applied twice
/// (``ReplicaClient+Updates``).
final class ReplicaClient {
    enum Phase {
        case hello
        case awaitingJoin
        case snapshot
        case live
    }

    let shared: ReplicaShared
    let object: String
    /// The host's control endpoints (several for a high-availability group) and the one in use.
    var endpoints: ControlEndpoints
    /// The control endpoint in use.
    var controlEndpoint: String { endpoints.current }
    let viewID: String
    let configuration: ReplicaConfiguration
    let thread: LoopThread
    /// The sockets to the host (the handshake monitor: ``ReplicaClient/watchHandshakes(of:)``).
    var sockets = HostSockets()
    var dealer: Socket? { sockets.control }
    var subscriber: Socket? { sockets.updates }
    /// The phase, and when it began or, while a snapshot arrives, when its latest part did:
    /// the phase's deadline (``ReplicaConfiguration/requestTimeout``) counts from it.
    var phaseClock = PhaseClock(Phase.hello)
    var phase: Phase { phaseClock.current }
    /// What the last welcome gave: the schema, the session token, the host's terms.
    var terms = HostTerms()
    /// The requests on the control connection: ids, the hello's, and their silence
    /// (``ReplicaClient/checkControlSilence(at:)``).
    private var requests = ControlRequests()
    /// The object followed: the host run, the snapshot on its way (filled part by part
    /// straight into the arrays the state then takes) and the publications that wait for it.
    var follower: ObjectFollower<[UInt8]>
    /// The updates connection's silence: stale shown, reconnections for it in a row.
    var updatesSilence = UpdatesSilence()
    /// Whether `connect()` ran before: later calls are reconnections (counted).
    private var connectedBefore = false
    /// The repeating liveness check, cancelled at close.
    private var livenessTimer: LoopThread.TimerID?
    /// Closes the engine when its loop shuts down; removed at close (on a shared loop the
    /// engine goes long before the loop does).
    private var shutdownHook: LoopThread.ShutdownHookID?
    private(set) var closed = false
    var logger: Logger { configuration.logger }
    /// Action calls waiting to be sent or answered (``ReplicaClient+Calls``).
    var calls = PendingCalls()
    /// Reused for every frame received: no allocation per message.
    let topicFrame = ZeroMQ.Message()
    let bodyFrame = ZeroMQ.Message()
    /// The indexes of properties a publication changed, for observers of names.
    var tracker: ChangeTracker? = ChangeTracker()
    /// The topics this replica subscribes to.
    let runTopic: [UInt8]
    let joinTopic: [UInt8]

    init(thread: LoopThread, shared: ReplicaShared, object: String, endpoints: ControlEndpoints, configuration: ReplicaConfiguration) {
        self.thread = thread
        self.shared = shared
        self.object = object
        self.endpoints = endpoints
        self.viewID = configuration.viewID
        self.configuration = configuration
        runTopic = Topic.runs(object)
        joinTopic = Topic.join(configuration.viewID)
        follower = ObjectFollower(maxHeldBytes: configuration.limits.maxJoinBufferBytes)
        let tick = configuration.livenessCheckInterval
        // Weak: on a loop shared with other replicas, the loop outlives this engine (its
        // timer is cancelled and its shutdown hook removed at close).
        livenessTimer = thread.scheduleTimer(after: tick, repeating: tick) { [weak self] in self?.checkLiveness() }
        shutdownHook = thread.onShutdown { [weak self] in self?.close() }
    }

    // MARK: Connection

    /// Opens the control socket and says hello.
    func connect() {
        guard !closed else { return }
        endpoints.cancelHelloRetry()
        if connectedBefore { shared.reconnections.add(1, ordering: .relaxed) }
        connectedBefore = true
        settleSentCalls()
        updatesSilence.newConnection()
        tearDownSockets()
        requests.newConnection()
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
            sockets.control = dealer
        } catch {
            fail(StateBusError(.other, "cannot connect to \(controlEndpoint): \(error)", object: object))
            return
        }
        sayHello()
    }

    /// The control connection came back after a drop: the host restarted at its endpoint,
    /// or a standby that took the lead bound it anew. A hello or snapshot request sent on the
    /// dropped connection may have been lost with it (read by no one), so it is asked again
    /// now: waiting for the request timeout would, with other hosts listed, leave this one
    /// for silence and cost a view two timeouts before it came back to the leader. The
    /// phase's clock runs on, so a host that keeps dropping the connection is still left
    /// for silence in time.
    func controlConnectionCameBack() {
        switch phase {
        case .hello: sendHello()
        case .snapshot: sendSnapshotRequest()
        case .awaitingJoin, .live: break
        }
    }

    /// Says hello on the current connection, its phase's clock started anew.
    func sayHello() {
        enter(.hello)
        sendHello()
    }

    /// Sends a hello (the welcome answers the latest one). A retry waiting after a standby's
    /// refusal is moot once a hello is out: left waiting, it would open a new connection
    /// while the welcome to this one is on its way, and the leader would hold the view id
    /// for a connection that is gone. A hello that could not be sent leaves the retry.
    private func sendHello() {
        let hello = FollowerRequest.Hello(
            viewID: viewID, nodeName: configuration.nodeName, objects: [object], sessionToken: terms.sessionToken,
            schemaHash: terms.schema?.hash ?? 0, confirmsByEcho: configuration.confirmsWritesByEcho)
        requests.helloID = send(.hello(hello)) ?? 0
        if requests.helloID != 0 { endpoints.cancelHelloRetry() }
    }

    func enter(_ phase: Phase) {
        phaseClock.enter(phase)
        switch phase {
        case .hello: shared.setConnection(shared.inner.withLock { $0.state.hasSnapshot } ? .stale : .connecting)
        case .awaitingJoin, .snapshot: if shared.inner.withLock({ $0.connection }) != .stale { shared.setConnection(.syncing) }
        case .live:
            shared.inner.withLock { $0.lastError = nil }
            shared.setConnection(.live)
        }
    }

    private func tearDownSockets() {
        sockets.close(on: thread)
        shared.inner.withLock { $0.state.markAllUnsent() }
    }

    func close() {
        guard !closed else { return }
        if let dealer {
            // Worth waiting for only once the host has welcomed us (it lists the view): a
            // replica that never joined (no host there, a failed join) closes at once.
            // Kept within 0 (libzmq reads a negative linger as "forever") and an hour.
            let linger = terms.sessionToken.isEmpty ? .zero : min(max(configuration.goodbyeLinger, .zero), .seconds(3600))
            try? dealer.set(.linger, Int32(linger / .milliseconds(1)))
            _ = send(.goodbye(viewID: viewID))
        }
        closed = true
        if let livenessTimer { thread.cancelTimer(livenessTimer) }
        livenessTimer = nil
        if let shutdownHook { thread.removeShutdownHook(shutdownHook) }
        shutdownHook = nil
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
        shared.connectionFeed.notify([.errorChanged])
    }

    /// Sends a request; returns its request id, or `nil` when it could not be queued (no
    /// socket, or the socket's queue is full: the caller keeps what it must send again).
    @discardableResult
    func send(_ request: FollowerRequest) -> UInt64? {
        guard dealer != nil, let (bytes, id) = encode(request) else { return nil }
        return send(bytes, id: id)
    }

    /// Encodes a request as version 2 with the next request id; `nil` (logged) when it cannot
    /// be encoded.
    func encode(_ request: FollowerRequest) -> (bytes: [UInt8], id: UInt64)? {
        guard let encoded = requests.encode(request) else {
            logger.warning("could not encode a request for \(controlEndpoint)")
            return nil
        }
        return encoded
    }

    /// The id the next request takes.
    func takeRequestID() -> UInt64 { requests.takeID() }

    /// Sends an encoded request that carries `id` (from ``takeRequestID()``).
    func send(_ bytes: [UInt8], id: UInt64) -> UInt64? {
        guard let dealer else { return nil }
        do {
            // A DEALER queues while the host is unreachable, up to its high-water mark; the
            // window of writes in flight keeps writes well below it.
            requests.sent(at: .now)
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
            guard self.dealer === dealer, (try? dealer.receive(into: bodyFrame, wait: false)) == true else { return }
            requests.answered(at: .now)
            guard !bodyFrame.hasMore else {
                while (try? dealer.tryReceive())??.hasMore == true {}
                continue
            }
            handleReply(bodyFrame)
        }
    }

    private func handleReply(_ frame: ZeroMQ.Message) {
        frame.withUnsafeBytes { buffer in
            // The hot replies (a write's answer, a snapshot part) are read by hand; the others
            // by the generated code.
            if let envelope = ReplyEnvelope(buffer) {
                if envelope.body == ReplyEnvelope.welcome, let welcome = try? WelcomeReader(buffer, range: envelope.bodyRange, object: object) {
                    handleWelcome(welcome, requestID: envelope.requestID)
                    return
                }
                if envelope.body == ReplyEnvelope.writeReply, let answer = WriteCodec.decodeReply(buffer) {
                    handleWriteReply(writeID: answer.writeID, verdict: WriteVerdict(answer.outcome))
                    return
                }
                if envelope.body == ReplyEnvelope.snapshotPart {
                    handlePart(buffer, range: envelope.bodyRange, requestID: envelope.requestID)
                    return
                }
            }
            guard let reply = try? FollowerReply(bytes: Array(buffer)) else {
                logger.warning("dropped a reply that is not a StateBus message")
                return
            }
            switch reply.body {
            case .welcome(let welcome): handleWelcome(welcome.reader(for: object), requestID: reply.requestID)
            case .call(let callID, let outcome): handleCallReply(callID: callID, outcome: outcome)
            case .write(let writeID, let verdict):
                handleWriteReply(writeID: writeID, verdict: verdict)
            case .snapshotPart(let canonical):
                // A part the fast reader did not take (a form other than a host's): written
                // again canonically, then read as usual.
                canonical.withUnsafeBytes { canonical in
                    if let envelope = ReplyEnvelope(canonical) {
                        handlePart(canonical, range: envelope.bodyRange, requestID: envelope.requestID)
                    }
                }
            case .error(let error, let leader):
                if error.code == .notLeader, reply.requestID == requests.helloID || reply.requestID == follower.snapshotRequestID {
                    followLeader(named: leader, refusal: error)
                } else if reply.requestID == requests.helloID || reply.requestID == follower.snapshotRequestID {
                    fail(error)
                } else {
                    logger.warning("host error: \(error)")
                }
            case .views, .other: break
            }
        }
    }

    private func handleWelcome(_ welcome: WelcomeReader, requestID: UInt64) {
        guard phase == .hello, requestID == requests.helloID else { return }
        let known: HostTerms.KnownSchema
        if welcome.objectNames.isEmpty, let schema = terms.schema, welcome.schemaHash == schema.hash {
            known = schema  // the host's schema is the one we hold
        } else if let found = welcome.object {
            known = HostTerms.KnownSchema(
                hash: welcome.schemaHash, objectIndex: found.index, layout: PropertyLayout(names: found.names, kinds: found.kinds))
        } else if welcome.objectNames.isEmpty, terms.schema != nil {
            // A schema hash we do not hold (it changed since we asked): ask with none. (Asked
            // with none, an empty list means the host serves no object at all.)
            terms.schema = nil
            sayHello()
            return
        } else {
            let served = welcome.objectNames.isEmpty ? "no objects at all" : welcome.objectNames.joined(separator: ", ")
            fail(StateBusError(.unknownObject, "the host at \(controlEndpoint) serves no object '\(object)'; it serves: \(served)", object: object))
            return
        }
        if follower.epoch != 0 && welcome.epoch != follower.epoch {
            logger.info("host restarted (epoch \(follower.epoch) -> \(welcome.epoch)); resynchronising")
        }
        endpoints.welcomed()
        shared.inner.withLock { [controlEndpoint] in $0.welcomedBy = (welcome.hostName, controlEndpoint) }
        terms.take(welcome, schema: known)
        // The host answered, so what it reported before is past; a timeout is past only once
        // the view is live (a snapshot too large for the view times out after the welcome).
        shared.inner.withLock { inner in
            if inner.lastError?.code != .timeout { inner.lastError = nil }
        }
        let endpoint = UpdatesEndpoint.reachable(welcome.updatesEndpoint, controlEndpoint: controlEndpoint)
        do throws(RuntimeFolderError) {
            try RuntimeFolder.checkEndpoint(endpoint)
        } catch {
            fail(StateBusError(.unsafeEndpoint, "not subscribing to \(endpoint): \(error)", object: object))
            return
        }
        do {
            let subscriber = try Socket(context: thread.context, type: .sub)
            try secure(subscriber)
            try subscriber.set(.receiveHighWaterMark, Int32(clamping: max(1, configuration.limits.updatesQueueMessages)))
            try subscriber.set(.maxMessageSize, Int64(configuration.limits.maxIncomingMessageBytes))
            try subscriber.subscribe(runTopic)
            try subscriber.subscribe(Topic.heartbeat)
            try subscriber.subscribe(joinTopic)
            try subscriber.connect(endpoint)
            thread.register(subscriber) { [unowned self] in self.updatesReadable() }
            sockets.updates = subscriber
        } catch {
            fail(StateBusError(.other, "cannot subscribe to \(endpoint): \(error)", object: object))
            return
        }
        follower.start(epoch: welcome.epoch)
        _ = updatesSilence.heard(at: .now)
        enter(.awaitingJoin)
    }

    // MARK: Liveness

    private func checkLiveness() {
        guard !closed else { return }
        expireWrites()
        expireCalls()
        flushWrites()
        let now = ContinuousClock.now
        if endpoints.takeHelloRetry(at: now) {
            connect()
            return
        }
        guard !checkControlSilence(at: now) else { return }
        // Well within the host's view-id lease (10 s by default), so it stays ours. A view
        // whose requests wait unanswered pings too: a host that is alive but slow to answer
        // them (a write waiting for a commit on a stalled disk) answers a ping at once, and
        // is then not taken for a connection libzmq dropped (`checkControlSilence`).
        if phase == .live, requests.pingDue(at: now, idle: configuration.requestTimeout, timeout: configuration.requestTimeout) {
            requests.pinged(at: now)
            send(.ping)
        }
        switch phase {
        case .live, .awaitingJoin:
            // Heartbeats keep the updates connection heard, so a join marker that never came needs its
            // own deadline.
            if phase == .awaitingJoin, phaseClock.elapsed(at: now) > configuration.requestTimeout {
                logger.info("no join marker within \(configuration.requestTimeout); reconnecting")
                connect()
                return
            }
            guard let interval = terms.heartbeatInterval else { return }
            let silence = interval * configuration.missedHeartbeatsBeforeStale
            if phase == .live { updatesSilence.noteLive(for: phaseClock.elapsed(at: now), tolerated: silence) }
            guard updatesSilence.silent(at: now) > silence else { return }
            // Silence is the host's only when nothing waits to be read: after this process
            // was starved of CPU, this timer can run before the updates that did arrive.
            updatesReadable()
            guard updatesSilence.silent(at: now) > silence, !closed, phase == .live || phase == .awaitingJoin else { return }
            // Stale at once (the documented time); the reconnection waits longer after
            // reconnections in a row, and a late heartbeat meanwhile makes the view live again.
            if updatesSilence.reportStale() { shared.setConnection(.stale) }
            if updatesSilence.silent(at: now) > silence * updatesSilence.patience(withAlternatives: endpoints.hasAlternatives) {
                logger.info("no heartbeat for \(updatesSilence.silent(at: now)); the replica is stale, reconnecting")
                updatesSilence.reconnecting()
                endpoints.leaveSilent(at: now, suspectingFor: configuration.requestTimeout * 2)
                connect()
            }
        case .hello, .snapshot:
            if phaseClock.elapsed(at: now) > configuration.requestTimeout {
                // Asked again on the same connection: libzmq reconnects it by itself, and a
                // new connection would look like another replica to the host, which keeps
                // our view id for the old one until its lease ends (so a slow first welcome
                // would cost the view a whole lease).
                // Without a connection (opening one failed), only a new one can help.
                // With other hosts to try (a high-availability group), a silent one is left:
                // it may be the leader that died.
                if dealer == nil || (phase == .hello && endpoints.hasAlternatives) {
                    endpoints.leaveSilent(at: now, suspectingFor: configuration.requestTimeout * 2)
                    connect()
                } else if phase == .snapshot {
                    requestSnapshot()
                } else {
                    sayHello()
                }
            }
        }
    }

    /// Opens a new connection when the control connection has answered nothing for three
    /// request timeouts while a request waited: asking again on it cannot help when libzmq
    /// dropped it for good, as it does after a message larger than the replica's limit (it
    /// reconnects only after a network failure). - Returns: whether it reconnected.
    private func checkControlSilence(at now: ContinuousClock.Instant) -> Bool {
        guard let waited = requests.unanswered(at: now), waited > configuration.requestTimeout * 3 else { return false }
        // What was read but not yet handled is an answer: after this process was starved of
        // CPU, this timer can run before it.
        controlReadable()
        guard let waited = requests.unanswered(at: now), waited > configuration.requestTimeout * 3, !closed else { return false }
        let message: String
        if let problem = UnreachableIPCSocket.problem(of: controlEndpoint) {
            message =
                "nothing listens at \(controlEndpoint) (\(problem)), and nothing answered for \(waited); still trying. "
                + "Start the host, or give the control endpoint it prints when it starts (control=…)"
        } else {
            message =
                "the host at \(controlEndpoint) answered nothing for \(waited) (3 x ReplicaConfiguration.requestTimeout); "
                + "reconnecting. If the host is running, its answer may be larger than this replica reads "
                + "(ReplicaLimits.maxIncomingMessageBytes, \(configuration.limits.maxIncomingMessageBytes) bytes): libzmq then "
                + "drops the connection; raise the limit above the host's HostLimits.maxObjectBytes"
        }
        fail(StateBusError(.timeout, message, object: object))
        endpoints.leaveSilent(at: now, suspectingFor: configuration.requestTimeout * 2)
        connect()
        return true
    }
}
