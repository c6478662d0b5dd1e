import Foundation
import Logging
import StateBusRuntime
import StateBusWire
import SwiftProtobuf
import ZeroMQ

/// The host's side of the protocol: its two sockets and every message it handles. Lives on
/// the host's I/O loop thread only, so it needs no locks of its own (the shared object
/// state is in ``SourceOfTruth``; the group commit before each publication is the
/// ``CommitPipeline``).
final class HostServer {
    let state: SourceOfTruth
    let configuration: HostConfiguration
    let counters: HostCounters
    let control: Socket
    let updates: Socket
    let controlEndpoint: String
    let updatesEndpoint: String
    /// Persisted properties, when any object has them.
    let persistence: HostPersistence?
    /// Holds what waits for a group commit and runs the transactions.
    private var commitPipeline: CommitPipeline!
    /// Answers to the writes handled since the last publication, in order: each goes out
    /// with its batch (``publishPending()``), at the end of the loop turn at the latest.
    private var turnReplies: [PendingReply] = []
    /// The answers given to recent writes, so a write sent again is not applied twice.
    private var ledger = WriteLedger()
    /// Each connection's view id, queued replies and parked requests.
    var clients: ClientTable
    /// The last sequence published per object, which heartbeats announce.
    private var publishedSequences: [String: UInt64] = [:]
    /// Each object's sequence when the server started (what a snapshot served before any
    /// publication holds).
    private let restoredSequences: [String: UInt64]
    private let objectNames: [String]
    private let welcome: Statebus_V1_Welcome
    /// Which subscriptions the updates socket admits.
    private let subscriptionGate: SubscriptionGate
    /// CURVE, the ZAP handler and authorization by role, when the host has keys.
    let keyGuard: HostGuard?
    var logger: Logger { configuration.logger }
    /// The objects served, by name (their actions, for calls).
    let definitions: [String: ObjectDefinition]
    /// The code that runs each model-served object's actions.
    let actions: ActionHandlers
    /// Calls whose action is running (at most ``HostConfiguration/maxRunningCalls``).
    var runningCalls = 0
    /// This server as seen from other threads: a running call's task comes back through it.
    private(set) var onLoop: LoopBound<WeakReference<HostServer>>!

    /// Protobuf limits for untrusted input: shallow nesting, so a hostile message cannot
    /// recurse deeply.
    static let decodingOptions: BinaryDecodingOptions = {
        var options = BinaryDecodingOptions()
        options.messageDepthLimit = 64
        return options
    }()

    init(
        thread: LoopThread, state: SourceOfTruth, objects: [ObjectDefinition], actions: ActionHandlers, configuration: HostConfiguration,
        counters: HostCounters
    ) throws {
        // Restore persisted properties before any socket exists: the first snapshot served
        // already holds them.
        persistence = try HostPersistence.open(configuration: configuration, objects: objects, state: state)
        restoredSequences = state.inner.withLock { inner in inner.stores.mapValues(\.sequence) }
        objectNames = objects.map(\.name)
        definitions = Dictionary(objects.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.actions = actions
        clients = ClientTable(maximumClients: configuration.maxClients, lease: configuration.viewIDLease)
        self.state = state
        self.configuration = configuration
        self.counters = counters
        control = try Socket(context: thread.context, type: .router)
        updates = try Socket(context: thread.context, type: .xpub)
        // libzmq drops anything above this before we see it; our own, lower limit answers
        // with a clear `tooLarge` error instead.
        try control.set(.maxMessageSize, Int64(configuration.maxMessageBytes) * 4 + 4096)
        try control.set(.routerMandatory, true)
        // No handover: a connection never takes over another's routing id. Views no longer
        // choose their routing id at all; the socket gives each connection its own, and the
        // view id binds to it at hello (``ClientTable``).
        try control.set(.routerHandover, false)
        // Per client, in libzmq's queue; past it replies wait in the client's backlog.
        try control.set(.sendHighWaterMark, 1_000)
        // Above any view's window of writes in flight, so libzmq never stops reading a
        // well-behaved view's connection (see HostLimits.controlQueueMessages).
        try control.set(.receiveHighWaterMark, Int32(HostLimits.controlQueueMessages))
        try updates.set(.xpubVerbose, true)
        // Bounds in bytes (HostLimits): libzmq counts a subscriber's queue in messages, and
        // admits any subscription unless told to pass them to us.
        try updates.set(.xpubManual, true)
        try updates.set(.maxMessageSize, Int64(configuration.limits.maxSubscriptionBytes))
        try updates.set(.sendHighWaterMark, Int32(clamping: configuration.limits.subscriberQueueMessages))
        subscriptionGate = SubscriptionGate(objects: objects.map(\.name), maxSubscriptionBytes: configuration.limits.maxSubscriptionBytes)
        try updates.set(.linger, 200)
        // Before the binds: the sockets must be CURVE servers, and the ZAP handler bound,
        // before the first peer connects.
        keyGuard = try HostGuard.install(configuration: configuration, thread: thread, control: control, updates: updates, counters: counters)
        try Self.prepareFolder(for: configuration.controlEndpoint)
        try Self.prepareFolder(for: configuration.updatesEndpoint)
        controlEndpoint = try control.bind(configuration.controlEndpoint)
        updatesEndpoint = try updates.bind(configuration.updatesEndpoint)
        Self.restrictSocketFile(of: controlEndpoint)
        Self.restrictSocketFile(of: updatesEndpoint)
        keyGuard?.updatesBound(updates, at: updatesEndpoint)

        var welcome = Statebus_V1_Welcome()
        welcome.epoch = state.epoch
        welcome.updatesEndpoint = configuration.advertisedUpdatesEndpoint ?? updatesEndpoint
        welcome.hostName = configuration.name
        welcome.objects = objects.map(\.schema)
        welcome.heartbeatIntervalMs =
            configuration.heartbeatInterval.map { UInt32(clamping: $0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000) }
            ?? 0
        welcome.maxMessageBytes = UInt64(configuration.maxMessageBytes)
        self.welcome = welcome

        // The commit thread wakes the loop when a transaction finished.
        let server = LoopBound(WeakReference(self), on: thread)
        onLoop = server
        commitPipeline = CommitPipeline(truth: state, persistence: persistence) {
            _ = server.loop.execute { _ in server.value.object?.publishPending() }
        }
        // Answers that the file remembers from the previous host: a copy of such a write,
        // sent again by a view that never heard the answer, is answered, not applied again.
        for stored in persistence?.storedAnswers ?? [] {
            var reply = Statebus_V1_WriteReply()
            reply.writeID = stored.writeID
            reply.accepted = true
            // Applied in an earlier epoch, so already in this epoch's first snapshot.
            reply.sequence = restoredSequences[stored.object] ?? 0
            ledger.record(view: stored.view, writeID: stored.writeID, answer: .init(reply: reply, durable: true, digest: stored.digest))
        }
        // At stop: commit and publish what is queued (a host update just before stop is not
        // lost), waiting for the transactions, then free the database for the next host.
        thread.onShutdown { [unowned self] in
            self.publishPending()
            while !self.commitPipeline.isIdle {
                self.commitPipeline.waitForRunningTransaction()
                self.publishPending()
            }
            self.persistence?.writer.close()
        }
        thread.register(control) { [unowned self] in self.controlReadable() }
        thread.register(updates) { [unowned self] in self.subscriptionsReadable() }
        // Backlogged clients are retried often: the socket says when it is writable as a
        // whole, not per client.
        thread.scheduleTimer(after: .milliseconds(10), repeating: .milliseconds(10)) { [unowned self] in self.drainBacklogs() }
        if let interval = configuration.heartbeatInterval {
            thread.scheduleTimer(after: interval, repeating: interval) { [unowned self] in self.heartbeat() }
        }
        counters.clientBacklogLimitBytes.record(configuration.maxClientBacklogBytes)
    }

    /// ipc endpoints need their folder to exist; the runtime folder is made (or checked)
    /// private, since its sockets are the way into every host of the user.
    static func prepareFolder(for endpoint: String) throws {
        guard endpoint.hasPrefix("ipc://") else { return }
        let path = String(endpoint.dropFirst("ipc://".count))
        let folder = (path as NSString).deletingLastPathComponent
        if folder == RuntimeFolder.path {
            try RuntimeFolder.prepare()
        } else if !folder.isEmpty {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
    }

    /// An ipc socket file is readable and writable by its user only (mode 0600): the
    /// folder's permissions are the first guard, this the second.
    static func restrictSocketFile(of boundEndpoint: String) {
        guard boundEndpoint.hasPrefix("ipc://") else { return }
        chmod(String(boundEndpoint.dropFirst("ipc://".count)), 0o600)
    }

    // MARK: Control channel

    private func controlReadable() {
        // Everything handled in this turn is published (and its answers sent) together; what
        // waits for durability joins the next group commit.
        defer { if !turnReplies.isEmpty { publishPending() } }
        drainBacklogs()
        for _ in 0..<256 {
            let frames: [ZeroMQ.Message]
            do {
                guard let received = try control.tryReceiveMultipart() else { return }
                frames = received
            } catch {
                return
            }
            counters.requests.add(1, ordering: .relaxed)
            counters.receivedBytes.add(frames.last?.count ?? 0, ordering: .relaxed)
            guard frames.count == 2 else {
                counters.badMessages.add(1, ordering: .relaxed)
                if let identity = frames.first?.bytes, frames.count > 2 {
                    reply(
                        to: identity, requestID: 0,
                        error: StateBusError(.badRequest, "a request is exactly one frame after the routing id; got \(frames.count - 1) frames"))
                }
                continue
            }
            let identity = frames[0].bytes
            clients.touch(identity)
            if clients.isBacklogged(identity) {
                // Not handled until this client's replies drain: back-pressure on the client.
                let backlog = clients.park(frames[1], from: identity)
                if backlog > configuration.maxClientBacklogBytes { dropClient(identity, backlog: backlog) }
                continue
            }
            handle(identity: identity, payload: frames[1])
        }
    }

    /// Sends queued replies that the socket now takes, then handles the requests that were
    /// parked behind them.
    private func drainBacklogs() {
        guard !clients.backlogged.isEmpty else { return }
        for identity in clients.backlogged {
            while let bytes = clients.firstReply(of: identity) {
                switch deliver(bytes, to: identity) {
                case .sent: clients.removeFirstReply(of: identity)
                case .full: break
                case .gone: clients.drop(identity)
                }
                if !clients.isBacklogged(identity) || clients.firstReply(of: identity) == bytes { break }
            }
            for request in clients.takeParked(of: identity) {
                handle(identity: identity, payload: request)
            }
        }
        if !turnReplies.isEmpty { publishPending() }
    }

    /// Forgets a client whose backlog passed its bound: it does not read its replies.
    private func dropClient(_ identity: [UInt8], backlog: Int) {
        let viewID = clients.viewID(of: identity) ?? "(no hello)"
        let (replies, requests) = clients.drop(identity)
        counters.droppedClients.add(1, ordering: .relaxed)
        counters.droppedMessages.add(replies, ordering: .relaxed)
        logger.warning(
            "dropped view \(viewID): it does not read its replies (\(backlog) bytes waiting, more than HostConfiguration.maxClientBacklogBytes \(configuration.maxClientBacklogBytes)); \(replies) replies and \(requests) requests discarded, its writes will time out on its side"
        )
    }

    private func handle(identity: [UInt8], payload: ZeroMQ.Message) {
        guard payload.count <= configuration.maxMessageBytes else {
            counters.badMessages.add(1, ordering: .relaxed)
            reply(
                to: identity, requestID: 0,
                error: StateBusError(.tooLarge, "the request has \(payload.count) bytes; this host accepts at most \(configuration.maxMessageBytes)"))
            return
        }
        let request: Statebus_V1_Request
        do {
            request = try payload.withUnsafeBytes { bytes in
                try Statebus_V1_Request(
                    serializedBytes: Data(
                        bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!), count: bytes.count,
                        deallocator: .none),
                    options: Self.decodingOptions
                )
            }
        } catch {
            counters.badMessages.add(1, ordering: .relaxed)
            reply(to: identity, requestID: 0, error: StateBusError(.badRequest, "not a StateBus request (\(error)); see proto/PROTOCOL.md"))
            return
        }
        guard request.protocolVersion == StateBusProtocol.version else {
            counters.badMessages.add(1, ordering: .relaxed)
            reply(
                to: identity, requestID: request.requestID,
                error: StateBusError(
                    .unsupportedVersion,
                    "protocol version \(request.protocolVersion) is not supported; this host speaks version \(StateBusProtocol.version)"))
            return
        }
        if let refusal = keyGuard?.refusal(for: request, from: payload) {
            refuse(request, refusal, to: identity)
            return
        }
        if case .hello = request.body, let keyName = keyGuard?.keyName(of: payload) {
            clients.noteKeyName(keyName, of: identity)
        }
        switch request.body {
        case .hello(let hello):
            var welcome = self.welcome
            // The join subscription carries the view id and must fit the updates socket's
            // frame limit; a longer id could never join, so refuse it now with a reason.
            let longestViewID = configuration.limits.maxSubscriptionBytes - 4
            guard hello.viewID.utf8.count <= longestViewID else {
                counters.badMessages.add(1, ordering: .relaxed)
                reply(
                    to: identity, requestID: request.requestID,
                    error: StateBusError(
                        .badRequest,
                        "the view id has \(hello.viewID.utf8.count) bytes; this host takes at most \(longestViewID) (HostLimits.maxSubscriptionBytes - 4): use a shorter id, such as a UUID"
                    ))
                return
            }
            if hello.relay, hello.viewID.isEmpty {
                counters.badMessages.add(1, ordering: .relaxed)
                reply(to: identity, requestID: request.requestID, error: StateBusError(.badRequest, "a relay's hello needs a view id of its own"))
                return
            }
            if !hello.viewID.isEmpty {
                switch clients.hello(viewID: hello.viewID, from: identity, token: Array(hello.sessionToken)) {
                case .bound(let token):
                    welcome.sessionToken = Data(token)
                    if hello.relay { clients.markRelay(identity) }
                    clients.describe(identity, nodeName: hello.nodeName)
                case .inUse:
                    counters.badMessages.add(1, ordering: .relaxed)
                    reply(
                        to: identity, requestID: request.requestID,
                        error: StateBusError(
                            .viewIDInUse,
                            "view id '\(hello.viewID)' belongs to another live connection; give each replica its own id (ReplicaConfiguration.viewID), or wait \(configuration.viewIDLease) after the other stopped"
                        ))
                    return
                }
            }
            var reply = Statebus_V1_Reply()
            reply.welcome = welcome
            send(reply, to: identity, requestID: request.requestID)
        case .snapshot(let snapshot):
            sendSnapshot(of: snapshot.object, to: identity, requestID: request.requestID)
        case .write(let write):
            handleWrite(write, from: identity, requestID: request.requestID)
        case .ping:
            var reply = Statebus_V1_Reply()
            var pong = Statebus_V1_Pong()
            pong.epoch = state.epoch
            reply.pong = pong
            send(reply, to: identity, requestID: request.requestID)
        case .call(let call):
            handleCall(call, from: identity, requestID: request.requestID)
        case .views:
            send(clients.viewListReply(), to: identity, requestID: request.requestID)
        case .goodbye(let goodbye):
            clients.goodbye(viewID: goodbye.viewID, from: identity)
        case .none:
            counters.badMessages.add(1, ordering: .relaxed)
            reply(
                to: identity, requestID: request.requestID,
                error: StateBusError(.badRequest, "the request has no body (hello, snapshot, write, call, views, ping or goodbye)"))
        }
    }

    /// Answers a request its key may not make: a write with a rejection (so the view rolls
    /// it back), anything else with an error.
    private func refuse(_ request: Statebus_V1_Request, _ error: StateBusError, to identity: [UInt8]) {
        counters.forbiddenRequests.add(1, ordering: .relaxed)
        if case .call(let call) = request.body {
            answerCall(call.callID, with: .failure(error), to: identity, requestID: request.requestID)
            return
        }
        guard case .write(let write) = request.body else {
            reply(to: identity, requestID: request.requestID, error: error)
            return
        }
        counters.writesRejected.add(1, ordering: .relaxed)
        var reply = Statebus_V1_Reply()
        reply.writeReply.writeID = write.writeID
        reply.writeReply.rejection = error.wire
        send(reply, to: identity, requestID: request.requestID)
    }

    private func handleWrite(_ write: Statebus_V1_WriteRequest, from identity: [UInt8], requestID: UInt64) {
        var writeReply = Statebus_V1_WriteReply()
        writeReply.writeID = write.writeID
        // Unknown fields mean a client built for another schema: refuse rather than guess.
        if !write.unknownFields.data.isEmpty || write.changes.contains(where: \.carriesUnknownFields) {
            counters.badMessages.add(1, ordering: .relaxed)
            let property = write.changes.first(where: \.carriesUnknownFields)?.property
            writeReply.rejection =
                StateBusError(
                    .badRequest,
                    "the write has fields this host does not know\(property.map { " (in the change of '\($0)')" } ?? ""); it refuses them rather than store something else than was sent: check the protocol version",
                    object: write.object, property: property
                ).wire
        } else if case let admission = clients.admitsWrite(viewID: write.viewID, from: identity), admission != .admitted {
            counters.writesRejected.add(1, ordering: .relaxed)
            writeReply.rejection =
                admission == .notJoined
                ? StateBusError(
                    .notJoined,
                    "view id '\(write.viewID)' has not said hello on this connection to this host (it restarted, or the connection is new); "
                        + "send a hello first, then the write again",
                    object: write.object
                ).wire
                : StateBusError(
                    .viewIDInUse, "view id '\(write.viewID)' belongs to another connection; this connection may not write as it",
                    object: write.object
                ).wire
        } else {
            let origin = write.viewID.isEmpty ? "anonymous" : write.viewID
            // Computed once: it finds a copy, and it is recorded (and stored, when durable).
            let digest = WriteDigest.of(object: write.object, changes: write.changes)
            if !write.viewID.isEmpty, let earlier = ledger.answer(to: write, digest: digest) {
                // A copy of a write already handled (sent again after a reconnect, or to the
                // next host after a crash): answered as the first time, nothing changed.
                counters.duplicateWrites.add(1, ordering: .relaxed)
                turnReplies.append(
                    PendingReply(
                        identity: identity, requestID: requestID, reply: earlier.reply, object: write.object, sequence: 0, durable: earlier.durable,
                        view: write.viewID, writeID: write.writeID, digest: earlier.digest, isCopy: true))
                return
            }
            var durable = false
            defer {
                if !write.viewID.isEmpty {
                    ledger.record(view: write.viewID, writeID: write.writeID, answer: .init(reply: writeReply, durable: durable, digest: digest))
                }
            }
            do {
                let changes = write.changes.map(PropertyChange.init(wire:))
                let result = try state.apply(changes, to: write.object, fromView: origin, writeID: write.writeID)
                counters.writesAccepted.add(1, ordering: .relaxed)
                writeReply.accepted = true
                writeReply.sequence = result.sequence
                durable = persistence?.touchesPersisted(write.object, changes.map(\.property)) ?? false
                // Answered with its batch's publication: at the end of this loop turn, or,
                // when it waits for durability, once its group commit is done.
                turnReplies.append(
                    PendingReply(
                        identity: identity, requestID: requestID, reply: writeReply, object: write.object, sequence: result.sequence,
                        durable: durable, view: write.viewID, writeID: write.writeID, digest: digest, isCopy: false))
                return
            } catch {
                counters.writesRejected.add(1, ordering: .relaxed)
                writeReply.rejection = error.wire
            }
        }
        var reply = Statebus_V1_Reply()
        reply.writeReply = writeReply
        send(reply, to: identity, requestID: requestID)
    }

    private func sendSnapshot(of object: String, to identity: [UInt8], requestID: UInt64) {
        guard let store = state.inner.withLock({ $0.stores[object] }) else {
            reply(to: identity, requestID: requestID, error: StateBusError(.unknownObject, "this host serves no object '\(object)'", object: object))
            return
        }
        counters.snapshotsServed.add(1, ordering: .relaxed)
        let properties = store.propertyStates
        let chunkSize = max(1, configuration.snapshotChunkSize)
        var index = 0
        var start = 0
        repeat {
            let end = min(properties.count, start + chunkSize)
            var chunk = Statebus_V1_SnapshotChunk()
            chunk.object = object
            chunk.epoch = state.epoch
            chunk.sequence = store.sequence
            chunk.chunkIndex = UInt32(index)
            chunk.last = end == properties.count
            chunk.properties = Array(properties[start..<end])
            var reply = Statebus_V1_Reply()
            reply.snapshotChunk = chunk
            // A view too slow to take its snapshot times out and asks again.
            // Chunks the socket will not take now wait in the client's backlog, in order; a
            // client that has gone gets no more.
            if !send(reply, to: identity, requestID: requestID), !clients.isBacklogged(identity) { return }
            index += 1
            start = end
        } while start < properties.count
    }

    private func reply(to identity: [UInt8], requestID: UInt64, error: StateBusError) {
        var reply = Statebus_V1_Reply()
        reply.error = error.wire
        send(reply, to: identity, requestID: requestID)
    }

    /// Sends a reply, or queues it behind the client's earlier ones when the socket will not
    /// take it now (never dropped while the client is there).
    /// - Returns: `false` when it did not go out now (queued, or the client is gone).
    @discardableResult
    func send(_ reply: Statebus_V1_Reply, to identity: [UInt8], requestID: UInt64) -> Bool {
        var reply = reply
        reply.protocolVersion = StateBusProtocol.version
        reply.requestID = requestID
        let bytes: [UInt8]
        do {
            bytes = try reply.serializedBytes()
        } catch {
            logger.error("could not encode a reply: \(error)")
            counters.droppedMessages.add(1, ordering: .relaxed)
            return false
        }
        if counters.repliesToDrop.load(ordering: .relaxed) > 0 {
            counters.repliesToDrop.subtract(1, ordering: .relaxed)
            return true  // fault injection: lost on the wire
        }
        guard !clients.isBacklogged(identity) else {
            queue(bytes, to: identity)
            return false
        }
        switch deliver(bytes, to: identity) {
        case .sent:
            counters.replyBytes.add(bytes.count, ordering: .relaxed)
            return true
        case .full:
            queue(bytes, to: identity)
            return false
        case .gone:
            clients.drop(identity)
            return false
        }
    }

    private func queue(_ bytes: [UInt8], to identity: [UInt8]) {
        let backlog = clients.queueReply(bytes, to: identity)
        if backlog > configuration.maxClientBacklogBytes { dropClient(identity, backlog: backlog) }
    }

    private enum Delivery { case sent, full, gone }

    /// One attempt to hand a reply to the socket.
    private func deliver(_ bytes: [UInt8], to identity: [UInt8]) -> Delivery {
        do {
            guard try control.send(identity, more: true, wait: false) else { return .full }
            // The routing frame is in: libzmq checks its limit at a message's first frame only,
            // so it takes the rest of a message it has started.
            guard try control.send(bytes, wait: false) else {
                logger.error("libzmq refused the body of a reply whose routing frame it took; the reply is lost")
                counters.droppedMessages.add(1, ordering: .relaxed)
                return .sent
            }
            return .sent
        } catch {
            // The client has gone (router-mandatory reports it): nobody is left to tell.
            counters.droppedMessages.add(1, ordering: .relaxed)
            return .gone
        }
    }

    // MARK: Updates channel

    /// Publishes every queued batch that needs no commit, with the answers of the writes
    /// that made them; holds the rest for the group commit (``CommitPipeline``), and
    /// publishes and answers the groups whose transaction has finished.
    ///
    /// Publication follows the commit: a view never hears a persisted value in an update
    /// before the host's file holds it, so a view that restarts with the host sees nothing go
    /// backwards. The cost is one fsync of latency on an update that touches a persisted
    /// property; other objects' updates are not held up by it.
    func publishPending() {
        let replies = turnReplies
        turnReplies.removeAll()
        var releases = [commitPipeline.take(replies: replies)]
        releases += commitPipeline.advance()
        if let persistence { counters.persistenceCommits.store(persistence.writer.commitCount, ordering: .relaxed) }
        var compensated = false
        for release in releases {
            publish(release.batches, undurable: release.undurableBatches)
            answer(release.replies, failure: release.failure)
            for (waiter, durable) in release.waiters {
                guard let failure = release.failure, durable else {
                    waiter(nil)
                    continue
                }
                waiter(
                    StateBusError(
                        .persistenceFailed,
                        "the host could not make the change durable, so its persisted properties were set back to their stored values: \(failure)"))
            }
            if release.failure != nil { compensated = true }
        }
        // A failed commit queued compensating batches: they restore what the file holds, so
        // they go out at once.
        if compensated { publishPending() }
    }

    /// Publishes batches in sequence order, several per publication.
    private func publish(_ pending: [AppliedBatch], undurable: Set<CommitPipeline.BatchKey>) {
        var start = 0
        while start < pending.count {
            let object = pending[start].object
            var end = start + 1
            // Split by bytes too (HostLimits.maxPublicationBytes): the subscriber queue's
            // bound in bytes assumes no publication is larger, except a single large batch.
            var bytes = pending[start].encodedSizeBound
            while end < pending.count, end - start < 512, pending[end].object == object {
                bytes += pending[end].encodedSizeBound
                guard bytes <= configuration.limits.maxPublicationBytes else { break }
                end += 1
            }
            var publication = Statebus_V1_Publication()
            publication.protocolVersion = StateBusProtocol.version
            publication.updates = pending[start..<end].map { batch in
                var wire = batch.wire(epoch: state.epoch)
                // A view takes the echo of its own write as the host's acceptance. A write
                // whose commit failed is published (its compensation follows) but not
                // accepted, so it travels without its origin: its view hears the
                // persistenceFailed reply instead.
                if !undurable.isEmpty, undurable.contains(CommitPipeline.BatchKey(object: batch.object, sequence: batch.sequence)) {
                    wire.origin = ""
                    wire.writeID = 0
                }
                return wire
            }
            if let last = pending[start..<end].last { publishedSequences[object] = last.sequence }
            counters.publishedUpdates.add(end - start, ordering: .relaxed)
            start = end
            if counters.publicationsToDrop.load(ordering: .relaxed) > 0 {
                counters.publicationsToDrop.subtract(1, ordering: .relaxed)
                continue  // fault injection: lost on the wire
            }
            publish(publication, topic: Topic.updates(object))
        }
    }

    /// Sends write answers: accepted, or, for those that touched persisted properties when
    /// their commit failed, `persistenceFailed`. A copy gets its first copy's answer as it
    /// stands now.
    private func answer(_ replies: [PendingReply], failure: PersistenceError?) {
        for pending in replies {
            var writeReply = pending.reply
            if pending.isCopy {
                writeReply = ledger.answer(view: pending.view, writeID: pending.writeID)?.reply ?? writeReply
            } else if let failure, pending.durable {
                writeReply.accepted = false
                writeReply.sequence = 0
                writeReply.rejection =
                    StateBusError(
                        .persistenceFailed,
                        "the host could not make the write durable, so its persisted properties were set back to their stored values: \(failure)"
                    ).wire
                counters.writesAccepted.subtract(1, ordering: .relaxed)
                counters.writesRejected.add(1, ordering: .relaxed)
                if !pending.view.isEmpty { ledger.update(view: pending.view, writeID: pending.writeID, reply: writeReply) }
            }
            var reply = Statebus_V1_Reply()
            reply.writeReply = writeReply
            send(reply, to: pending.identity, requestID: pending.requestID)
        }
    }

    private func publish(_ publication: Statebus_V1_Publication, topic: [UInt8]) {
        do {
            let bytes: [UInt8] = try publication.serializedBytes()
            if try updates.send(multipart: [topic, bytes], wait: false) {
                counters.publications.add(1, ordering: .relaxed)
                counters.publicationBytes.add(topic.count + bytes.count, ordering: .relaxed)
            } else {
                counters.droppedMessages.add(1, ordering: .relaxed)
            }
        } catch {
            counters.droppedMessages.add(1, ordering: .relaxed)
        }
    }

    private func subscriptionsReadable() {
        for _ in 0..<256 {
            guard let message = try? updates.tryReceive() else { return }
            // Manual mode: each admission applies to the connection the message came from,
            // so it happens before the next receive.
            switch subscriptionGate.decide(message.bytes) {
            case .admit(let topic):
                try? updates.subscribe(topic)
            case .join(let topic, let viewID):
                // The marker tells the view its subscriptions are live (they were sent
                // before this one, on the same connection); the join topic is dropped at
                // once, so a peer cannot accumulate them.
                try? updates.subscribe(topic)
                var marker = Statebus_V1_JoinMarker()
                marker.viewID = viewID
                marker.epoch = state.epoch
                var publication = Statebus_V1_Publication()
                publication.protocolVersion = StateBusProtocol.version
                publication.joinMarker = marker
                publish(publication, topic: topic)
                try? updates.unsubscribe(topic)
            case .unsubscribe(let topic):
                try? updates.unsubscribe(topic)
            case .refuse(let reason):
                if counters.refusedSubscriptions.add(1, ordering: .relaxed).oldValue % 10_000 == 0 {
                    logger.warning(
                        "refused a subscription on the updates socket: \(reason) (refused so far: \(counters.refusedSubscriptions.load(ordering: .relaxed)); see HostStatistics.refusedSubscriptions)"
                    )
                }
            case .ignore:
                break
            }
        }
    }

    private func heartbeat() {
        counters.connectedViews.record(clients.connectedCount())
        counters.clientBacklogBytes.record(clients.totalBacklogBytes)
        // Publish anything queued first, so a heartbeat never announces a sequence whose
        // batch has not gone out yet.
        publishPending()
        // Sent every interval, busy or not: a view hears only its own object's updates and
        // the heartbeat, so updates of other objects (or join markers) must not stand in for
        // it (they did: a flood of joins, or one busy object, made idle views go stale).
        var heartbeat = Statebus_V1_Heartbeat()
        heartbeat.epoch = state.epoch
        // The sequences published, not the stores' own: the host's code may apply a batch
        // on another thread between the publish above and this line, and a heartbeat naming
        // a sequence not yet published sends every view into a resync.
        heartbeat.sequences = objectNames.map { name in
            var sequence = Statebus_V1_ObjectSequence()
            sequence.object = name
            sequence.sequence = publishedSequences[name] ?? restoredSequences[name] ?? 0
            return sequence
        }
        var publication = Statebus_V1_Publication()
        publication.protocolVersion = StateBusProtocol.version
        publication.heartbeat = heartbeat
        publish(publication, topic: Topic.heartbeat)
    }
}

/// A reference that does not keep its object alive (the commit thread's and running calls'
/// way back to the server, which must not keep a stopped host's server).
final class WeakReference<Object: AnyObject> {
    weak var object: Object?
    init(_ object: Object) { self.object = object }
}
