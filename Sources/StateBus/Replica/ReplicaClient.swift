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
    private let thread: LoopThread
    private var dealer: Socket?
    private var subscriber: Socket?
    private var phase = Phase.hello
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
    private var phaseStarted = ContinuousClock.now
    private var heartbeatInterval: Duration?
    private var closed = false
    private var logger: Logger { configuration.logger }

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
            try dealer.set(.routingID, Array(viewID.utf8))
            try dealer.set(.reconnectInterval, 100)
            try dealer.set(.reconnectIntervalMax, 1000)
            try dealer.set(.maxMessageSize, Int64(configuration.limits.maxIncomingMessageBytes))
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
        enter(.hello)
        var hello = Statebus_V1_Hello()
        hello.viewID = viewID
        hello.nodeName = configuration.nodeName
        hello.objects = [object]
        var request = Statebus_V1_Request()
        request.hello = hello
        helloRequestID = send(request)
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
        if let dealer { thread.unregister(dealer); dealer.close() }
        if let subscriber { thread.unregister(subscriber); subscriber.close() }
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
        shared.feed.finish()
        shared.connectionFeed.finish()
        shared.progress.finish()
        shared.writeOutcomes.finish()
    }

    private func fail(_ error: StateBusError) {
        logger.warning("\(error)")
        shared.inner.withLock { $0.lastError = error }
        shared.connectionFeed.notify(["error"])
    }

    @discardableResult
    private func send(_ request: Statebus_V1_Request) -> UInt64 {
        guard let dealer else { return 0 }
        var request = request
        request.protocolVersion = StateBusProtocol.version
        let id = nextRequestID
        nextRequestID += 1
        request.requestID = id
        do {
            let bytes: [UInt8] = try request.serializedBytes()
            // A DEALER queues while the host is unreachable, up to its high-water mark.
            _ = try dealer.send(bytes, wait: false)
        } catch {
            logger.debug("send failed: \(error)")
        }
        return id
    }

    // MARK: Control channel

    private func controlReadable() {
        guard let dealer else { return }
        for _ in 0..<256 {
            guard let message = try? dealer.tryReceive() else { return }
            guard !message.hasMore else {
                while (try? dealer.tryReceive())??.hasMore == true {}
                continue
            }
            guard let reply = try? message.withUnsafeBytes({ bytes in
                try Statebus_V1_Reply(serializedBytes: Array(bytes), options: HostServer.decodingOptions)
            }) else {
                logger.warning("dropped a reply that is not a StateBus message")
                continue
            }
            switch reply.body {
            case .welcome(let welcome): handleWelcome(welcome, requestID: reply.requestID)
            case .snapshotChunk(let chunk): handleChunk(chunk, requestID: reply.requestID)
            case .writeReply(let writeReply): handleWriteReply(writeReply)
            case .error(let error):
                let error = StateBusError(wire: error)
                if reply.requestID == helloRequestID || reply.requestID == snapshotRequestID {
                    fail(error)
                } else {
                    logger.warning("host error: \(error)")
                }
            case .pong, .none: break
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
        guard announced.hasPrefix("tcp://"), controlEndpoint.hasPrefix("tcp://") else { return announced }
        let rest = announced.dropFirst("tcp://".count)
        guard let colon = rest.lastIndex(of: ":") else { return announced }
        let host = rest[..<colon]
        guard host == "*" || host == "0.0.0.0" || host == "[::]" else { return announced }
        let controlRest = controlEndpoint.dropFirst("tcp://".count)
        guard let controlColon = controlRest.lastIndex(of: ":") else { return announced }
        return "tcp://\(controlRest[..<controlColon])\(rest[colon...])"
    }

    private func requestSnapshot() {
        var snapshot = Statebus_V1_SnapshotRequest()
        snapshot.object = object
        var request = Statebus_V1_Request()
        request.snapshot = snapshot
        snapshotValues = [:]
        snapshotVersions = [:]
        nextChunk = 0
        snapshotRequestID = send(request)
        enter(.snapshot)
    }

    private func handleChunk(_ chunk: Statebus_V1_SnapshotChunk, requestID: UInt64) {
        guard phase == .snapshot, requestID == snapshotRequestID, chunk.object == object else { return }
        guard chunk.chunkIndex == nextChunk, chunk.epoch == epoch else {
            requestSnapshot()  // a chunk went missing or the host restarted: start over
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
        if reply.accepted {
            shared.complete(writeID: reply.writeID, with: .success(reply.sequence))
        } else {
            let error = StateBusError(wire: reply.rejection)
            shared.complete(writeID: reply.writeID, with: .failure(error))
            shared.rejections.notify([error.description])
        }
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
            guard frames.count == 2, let publication = try? frames[1].withUnsafeBytes({ bytes in
                try Statebus_V1_Publication(serializedBytes: Array(bytes), options: HostServer.decodingOptions)
            }) else { continue }
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
        enum Interruption { case newEpoch, gap(have: UInt64, next: Statebus_V1_UpdateBatch) }
        var interruption: Interruption?
        var applied = 0
        let epoch = self.epoch
        let viewID = self.viewID
        shared.update { state in
            var changed = Set<String>()
            for batch in batches {
                guard batch.epoch == epoch else { interruption = .newEpoch; break }
                if batch.sequence <= state.sequence { continue }  // already in the snapshot
                guard batch.sequence == state.sequence + 1 else { interruption = .gap(have: state.sequence, next: batch); break }
                let changes = batch.changes.map(PropertyChange.init(wire:))
                state.applyBatch(sequence: batch.sequence, changes: changes, origin: batch.origin, writeID: batch.writeID, myViewID: viewID, changed: &changed)
                applied += 1
            }
            return changed
        }
        if applied > 0 { shared.appliedUpdates.add(applied, ordering: .relaxed) }
        switch interruption {
        case nil:
            return true
        case .newEpoch:
            logger.info("updates from a new host epoch; reconnecting")
            connect()
            return false
        case .gap(let have, let next):
            logger.info("sequence gap (have \(have), got \(next.sequence)); resynchronising")
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
        logger.warning("more than \(buffered.maxBytes) bytes of updates arrived while joining (ReplicaLimits.maxJoinBufferBytes); dropped them and restarting the join (restart \(restarts))")
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
            resync()
        }
    }

    // MARK: Liveness

    private func checkLiveness() {
        guard !closed else { return }
        let now = ContinuousClock.now
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
            if now - lastHeard > interval * configuration.missedHeartbeatsBeforeStale {
                logger.info("no heartbeat for \(now - lastHeard); the replica is stale, reconnecting")
                shared.setConnection(.stale)
                connect()
            }
        case .hello, .snapshot:
            if now - phaseStarted > configuration.requestTimeout {
                if phase == .snapshot { requestSnapshot() } else { connect() }
            }
        }
    }

    // MARK: Writes

    /// Sends writes made since the last call (only when live: before that, they wait).
    func flushWrites() {
        guard phase == .live else { return }
        let unsent = shared.inner.withLock { $0.state.takeUnsent() }
        for write in unsent {
            var body = Statebus_V1_WriteRequest()
            body.object = object
            body.writeID = write.id
            body.viewID = viewID
            body.changes = write.changes.map(\.wire)
            var request = Statebus_V1_Request()
            request.write = body
            send(request)
        }
    }
}
