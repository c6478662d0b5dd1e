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
///
/// It speaks protocol versions 1 and 2 at once: each request is answered in its own version,
/// and each object's updates are published in each form some view subscribed to
/// (``HostServer+Publishing``).
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
    let commitPipeline: CommitPipeline
    /// What this turn of the loop has done so far: held answers, due batches.
    var turn = HostTurn()
    /// How long a burst of the host's own changes gathers before the loop publishes it: a
    /// run per 200 µs instead of one per few changes (each costing the applying thread a
    /// wake-up of the loop). Bursts only: a change after a quiet moment goes out at once.
    static let burstInterval: Duration = .microseconds(200)
    /// The loop thread, for timers.
    let thread: LoopThread
    /// The answers given to recent writes, so a write sent again is not applied twice.
    var ledger = WriteLedger()
    /// Each connection's view id, queued replies and parked requests.
    var clients: ClientTable
    /// The sequence of the last batch released for publication per object (by index), which
    /// heartbeats announce: published in every form subscribed to, or in none when nobody
    /// subscribed to the object (its sequence still advances).
    var publishedSequences: [UInt64]
    /// Each object's sequence when the server started (what a snapshot served before any
    /// publication holds), by index.
    let restoredSequences: [UInt64]
    /// The welcome in each version, encoded once.
    let welcome: HostWelcome
    /// Which subscriptions the updates socket admits.
    let subscriptionGate: SubscriptionGate
    /// Per object (by index): whether some view subscribed to its version-1 or version-2
    /// topic. An object's updates are encoded only in the forms someone ever asked for; a
    /// flag, once set, stays (a subscription that ends tells the host nothing reliable).
    var publishesVersion1: [Bool]
    var publishesVersion2: [Bool]
    /// Each object's topics (by index), made once.
    let publicationTopics: [(runs: [UInt8], batches: [UInt8])]
    /// Reused for every run of updates and every snapshot part: no allocation per change.
    var runEncoder = UpdateRunEncoder()
    var partEncoder = SnapshotPartEncoder()
    /// CURVE, the ZAP handler and authorization by role, when the host has keys.
    let keyGuard: HostGuard?
    /// Reads each request with the checks every server makes (PROTOCOL.md section 4).
    var requestReader: RequestReader { RequestReader(speaker: "host", keyGuard: keyGuard) }
    var logger: Logger { configuration.logger }
    /// The objects served, by name (their actions, for calls).
    let definitions: [String: ObjectDefinition]
    /// The code that runs each model-served object's actions.
    let actions: ActionHandlers
    /// Calls whose action is running (at most ``HostConfiguration/maxRunningCalls``).
    var runningCalls = 0
    /// This server as seen from other threads: a running call's task comes back through it.
    let onLoop: LoopBound<WeakReference<HostServer>>

    init(
        thread: LoopThread, state: SourceOfTruth, objects: [ObjectDefinition], actions: ActionHandlers, configuration: HostConfiguration,
        counters: HostCounters
    ) throws {
        // Restore persisted properties before any socket exists: the first snapshot served
        // already holds them.
        persistence = try HostPersistence.open(
            configuration.persistence, store: configuration.propertyStore, hostName: configuration.name,
            lockTimeout: configuration.databaseLockTimeout, logger: configuration.logger,
            objects: objects, state: state)
        restoredSequences = state.inner.withLock { inner in inner.stores.map(\.sequence) }
        // The commit thread wakes the loop when a transaction finished, through a reference
        // that names this server once it is whole (below).
        let server = LoopBound(WeakReference<HostServer>(nil), on: thread)
        onLoop = server
        commitPipeline = CommitPipeline(truth: state, persistence: persistence) {
            _ = server.loop.execute { _ in server.value.object?.publishPending() }
        }
        publishedSequences = restoredSequences
        publishesVersion1 = objects.map { _ in false }
        publishesVersion2 = objects.map { _ in false }
        publicationTopics = objects.map { (Topic.runs($0.name), Topic.updates($0.name)) }
        definitions = Dictionary(objects.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.actions = actions
        clients = ClientTable(maximumClients: configuration.maxClients, lease: configuration.viewIDLease)
        self.state = state
        self.thread = thread
        self.configuration = configuration
        self.counters = counters
        let sockets = try ServingSockets(context: thread.context, maxMessageBytes: configuration.maxMessageBytes, limits: configuration.limits)
        (control, updates) = (sockets.control, sockets.updates)
        subscriptionGate = SubscriptionGate(objects: objects.map(\.name), maxSubscriptionBytes: configuration.limits.maxSubscriptionBytes)
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

        welcome = try HostWelcome(
            epoch: state.epoch, updatesEndpoint: configuration.advertisedUpdatesEndpoint ?? updatesEndpoint, hostName: configuration.name,
            heartbeatInterval: configuration.heartbeatInterval, maxMessageBytes: configuration.maxMessageBytes, objects: objects)

        server.value.object = self
        // Answers that the file remembers from the previous host: a copy of such a write,
        // sent again by a view that never heard the answer, is answered, not applied again.
        for stored in persistence?.storedAnswers ?? [] {
            // Applied in an earlier epoch, so already in this epoch's first snapshot.
            let sequence = state.index(of: stored.object).map { restoredSequences[$0] } ?? 0
            let answer = WriteLedger.Answer(verdict: .success(sequence), durable: true, digest: stored.digest)
            ledger.record(view: stored.view, writeID: stored.writeID, answer: answer)
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
        thread.scheduleTimer(after: .milliseconds(10), repeating: .milliseconds(10)) { [unowned self] in
            self.startTurn()
            self.drainBacklogs()
        }
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

    /// Forgets what the previous turn did: each turn of the control socket, and each tick of
    /// the backlog timer, is a turn of its own.
    private func startTurn() { turn.start() }

    private func controlReadable() {
        startTurn()
        // Everything handled in this turn is published (and its answers sent) together; what
        // waits for durability joins the next group commit.
        defer {
            let ending = turn.end()
            if ending.publish { publishPending() }
            // When libzmq's I/O thread shares this CPU (the pinned profile, or the kernel
            // keeping chatty threads together, as it does on a 2-core machine), it runs only
            // once this thread sleeps or yields: yielding now, before the rest of the turn,
            // saves the writer the turn's remaining time.
            if ending.yieldCPU { sched_yield() }
            // Awake rather than asleep on a CPU that takes tens of microseconds to wake.
            if ending.pollBusily { thread.pollBusily(for: configuration.busyPollingAfterWrites) }
        }
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
                        to: Requester(identity: identity),
                        error: StateBusError(.badRequest, "a request is exactly one frame after the routing id; got \(frames.count - 1) frames"))
                }
                continue
            }
            let identity = frames[0].bytes
            if clients.discards(identity) {
                // Read, so that libzmq never stops reading the connection; not handled.
                counters.droppedMessages.add(1, ordering: .relaxed)
                continue
            }
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
    func drainBacklogs() {
        guard !clients.backlogged.isEmpty else { return }
        for identity in clients.backlogged {
            clients.drainBacklog(of: identity) { deliver($0, to: identity) }
            for request in clients.takeParked(of: identity) {
                handle(identity: identity, payload: request)
            }
        }
        // The parked writes' batches go out now: on the timer, no turn of the control socket
        // follows to publish them (they waited for the next request or heartbeat before).
        if turn.hasPending { publishPending() }
    }

    /// Forgets a client whose backlog passed its bound: it does not read its replies.
    private func dropClient(_ identity: [UInt8], backlog: Int) {
        let viewID = clients.viewID(of: identity) ?? "(no hello)"
        let (replies, requests) = clients.discard(identity)
        counters.droppedClients.add(1, ordering: .relaxed)
        counters.droppedMessages.add(replies, ordering: .relaxed)
        logger.warning(
            "dropped view \(viewID): it does not read its replies (\(backlog) bytes waiting, more than HostConfiguration.maxClientBacklogBytes \(configuration.maxClientBacklogBytes)); \(replies) replies and \(requests) requests discarded, and whatever it sends on this connection from now on; its writes will time out on its side, and it can join again on a new connection"
        )
    }

    // MARK: Replies

    /// Answers with an error.
    func reply(to requester: Requester, error: StateBusError) {
        send(.error(error), to: requester)
    }

    /// Sends a reply in the requester's version, or queues it behind the client's earlier
    /// ones when the socket will not take it now (never dropped while the client is there).
    /// - Returns: `false` when it did not go out now (queued, or the client is gone).
    @discardableResult
    func send(_ reply: HostReply, to requester: Requester) -> Bool {
        let bytes: [UInt8]
        do {
            bytes = try reply.encoded(version: requester.version, requestID: requester.requestID)
        } catch {
            logger.error("could not encode a reply: \(error)")
            counters.droppedMessages.add(1, ordering: .relaxed)
            return false
        }
        return send(bytes, to: requester.identity)
    }

    /// Sends an encoded reply (see ``send(_:to:)-(HostReply,_)``).
    @discardableResult
    func send(_ bytes: [UInt8], to identity: [UInt8]) -> Bool {
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

    /// One attempt to hand a reply to the socket.
    private func deliver(_ bytes: [UInt8], to identity: [UInt8]) -> ClientTable.Delivery {
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
}

/// A reference that does not keep its object alive (the commit thread's and running calls'
/// way back to the server, which must not keep a stopped host's server).
final class WeakReference<Object: AnyObject> {
    weak var object: Object?
    init(_ object: Object?) { self.object = object }
}
