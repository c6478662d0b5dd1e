import StateBusRuntime
import StateBusWire
import ZeroMQ

/// A view process's copy of one shared object, kept in step with its host.
///
/// A replica joins by itself (hello, subscribe, snapshot, then live updates), resynchronises
/// by itself after a gap or a host restart, and goes ``ConnectionState/stale`` when the host
/// falls silent. Reads are immediate and thread-safe. Writes show at once, travel to the host,
/// and roll back if the host rejects them.
///
/// ```swift
/// let replica = try Replica(object: "SharedData", controlEndpoint: endpoint)
/// try await replica.waitUntilLive()
/// print(replica["sharedText"] ?? .null)
/// let receipt = replica.write("sharedText", to: "hi")
/// let sequence = try await receipt.accepted()
/// ```
public final class Replica: Sendable {
    /// The object's name.
    public let object: String
    /// The host's control endpoint, or several separated by commas: the hosts of a
    /// high-availability group, of which the replica follows the leader.
    public let controlEndpoint: String
    /// This replica's id, as the host sees it.
    public let viewID: String

    /// Identity, patience and the write queue's bounds.
    public let configuration: ReplicaConfiguration
    let shared = ReplicaShared()
    let loop: IOLoop
    private let ownsLoop: Bool

    /// Creates a replica and starts joining.
    /// - Parameters:
    ///   - object: the object to bind.
    ///   - controlEndpoint: the host's control endpoint; or the control endpoints of a
    ///     high-availability group's hosts, separated by commas (`statebus host --ha`): the
    ///     replica says hello to one at a time and follows the leader, whichever it is.
    ///   - configuration: identity and patience.
    ///   - loop: an I/O loop to share with other replicas (default: one of its own).
    /// - Throws: `StateBusError` `badRequest` for a ``ReplicaConfiguration/pinnedCPU`` this
    ///   process may not run on or an endpoint list with an empty entry; `ZeroMQError` when
    ///   no loop can be started.
    public init(object: String, controlEndpoint: String, configuration: ReplicaConfiguration = ReplicaConfiguration(), loop: IOLoop? = nil) throws {
        let endpoints = try ControlEndpoints(controlEndpoint)
        self.object = object
        self.controlEndpoint = controlEndpoint
        self.viewID = configuration.viewID
        self.configuration = configuration
        let ownsLoop = loop == nil
        let cpu = configuration.pinnedCPU
        if ownsLoop { try PinnedCPU.check(cpu, setting: "ReplicaConfiguration.pinnedCPU") }
        let loop = try loop ?? IOLoop(context: try Context(ioThreadCPU: cpu), name: "statebus-view", cpu: cpu)
        self.loop = loop
        self.ownsLoop = ownsLoop
        let shared = self.shared
        let bound = LoopBoundPromise<ReplicaClient>()
        var engineConfiguration = configuration
        // A shared loop serves many replicas (`statebus load`): one writer's wait must not
        // keep a CPU busy that the host or the other views need.
        if !ownsLoop { engineConfiguration.busyPollingForAnswers = .zero }
        loop.execute { [engineConfiguration] thread in
            let engine = ReplicaClient(
                thread: thread, shared: shared, object: object, endpoints: endpoints, configuration: engineConfiguration)
            bound.fulfil(LoopBound(engine, on: thread))
            engine.connect()
        }
        self.promise = bound
    }

    let promise: LoopBoundPromise<ReplicaClient>

    /// The replica's I/O loop as a task executor. Code that writes and awaits answers in a
    /// tight loop saves two thread hand-offs per round trip by running there:
    ///
    /// ```swift
    /// await withTaskExecutorPreference(replica.executor) {
    ///     let receipt = replica.write("count", to: 1)
    ///     _ = try? await receipt.accepted()  // resumes on the loop thread, in the same turn
    /// }
    /// ```
    ///
    /// A write made there is sent at once, and an awaited answer resumes in the turn of the
    /// loop that received it. Keep such code short: while it runs, the loop reads no socket.
    public var executor: any TaskExecutor { loop }

    deinit {
        if ownsLoop {
            loop.shutdown()
        } else {
            // On a shared loop, the engine is closed there (goodbye, sockets unregistered);
            // the closure keeps it alive until then.
            let promise = self.promise
            loop.execute { _ in promise.value?.value.close() }
        }
    }

    /// Closes the replica: says goodbye, ends every observation and fails open receipts.
    ///
    /// On a replica with its own loop, close waits until the goodbye has left, or for at most
    /// ``ReplicaConfiguration/goodbyeLinger`` when the host does not take it (gone, or too
    /// busy to finish a new connection's handshake), so a process may exit right after it.
    /// Called from the replica's own loop (a task on ``executor``), or while another call is
    /// closing it, it returns without waiting.
    public func close() {
        let promise = self.promise
        if ownsLoop {
            // The engine's shutdown hook closes it on the loop thread. The goodbye then waits
            // in libzmq's I/O thread: a process that exits now loses it, and the host lists
            // the view until its lease runs out. Terminating the context waits for it (bounded
            // by the control socket's linger), but only by the call that joined the loop's
            // thread: then every socket of the loop is closed, and no concurrent call
            // terminates the context under the goodbye (libzmq would refuse the send).
            if loop.shutdown() { loop.context.terminate() }
        } else {
            loop.execute { _ in promise.value?.value.close() }
        }
        shared.setConnection(.closed)
    }

    /// Drops the connection to the host and joins again, as after a lost host: the replica
    /// shows ``ConnectionState/stale`` until a fresh snapshot is in, then ``ConnectionState/live``.
    /// Values stay readable meanwhile, and writes not yet acknowledged are sent again.
    ///
    /// Use it for a "reconnect" action, or in tests to cut a replica off on purpose.
    /// Does nothing once the replica is closed. Safe from any thread.
    public func reconnect() {
        let promise = self.promise
        loop.execute { _ in promise.value?.value.connect() }
    }

    // MARK: State

    /// The epoch, sequence, shown values and connection state, read together, so they
    /// describe one moment (reading the properties one by one may mix two).
    public var consistentState: (epoch: UInt64, sequence: UInt64, values: [String: Value], connection: ConnectionState) {
        shared.inner.withLock { ($0.state.epoch, $0.state.sequence, $0.state.visible, $0.connection) }
    }

    /// Where the replica stands with its host.
    public var connectionState: ConnectionState { shared.inner.withLock { $0.connection } }

    /// The last error the host reported for joining (an unknown object, say), or the replica
    /// met while joining (a `timeout`), if any. Cleared when the host answers a new hello, and
    /// a timeout once the replica is live again.
    public var lastError: StateBusError? { shared.inner.withLock { $0.lastError } }

    /// The host that welcomed this replica last: its name and the control endpoint it was
    /// reached at, which for a high-availability group's hosts is the leader's; `nil` before
    /// the first welcome.
    public var welcomedBy: (name: String, controlEndpoint: String)? { shared.inner.withLock { $0.welcomedBy } }

    /// Every property's visible value: the host's, with this view's pending writes on top.
    public var values: [String: Value] { shared.inner.withLock { $0.state.visible } }

    /// Starts keeping, for one follower (a model's bus), the element edits and other changes
    /// of the visible values (``takeFollowed()``).
    /// - Returns: every property's visible value now, the follower's starting point.
    func follow() -> [String: Value] { shared.inner.withLock { $0.state.follow() } }

    /// What changed since ``follow()`` or the last call: element edits to repeat, and the
    /// visible values of the properties that changed any other way, or are in `whole` (the
    /// follower could not repeat their edits). Both are read under one lock, so they fit
    /// together.
    func takeFollowed(whole: Set<String> = []) -> (edits: [String: [ElementEdit]], values: [String: Value]) {
        shared.inner.withLock { $0.state.takeFollowed(whole: whole) }
    }

    /// Notes that the follower changed these properties itself (a write it made, taken or
    /// refused): ``takeFollowed(whole:)`` gives them whole next time.
    func followerChanged(_ properties: some Sequence<String>) {
        shared.inner.withLock { $0.state.followerChanged(properties) }
    }

    /// Stops keeping changes for the follower.
    func unfollow() { shared.inner.withLock { $0.state.unfollow() } }

    /// One property's visible value, or `nil` before the snapshot or for an unknown name.
    public subscript(property: String) -> Value? { shared.inner.withLock { $0.state.visibleValue(of: property) } }

    /// The object's property names as the host declares them (in its order), once the first
    /// snapshot is in; empty before. Cheaper than ``values`` for a large object.
    public var propertyNames: [String] { shared.inner.withLock { $0.state.layout.names } }

    /// The object's sequence number the replica has applied.
    public var sequence: UInt64 { shared.inner.withLock { $0.state.sequence } }

    /// The host epoch the replica is in step with (0 before the first snapshot).
    public var epoch: UInt64 { shared.inner.withLock { $0.state.epoch } }

    /// The sequence at which a property last changed, for compare-and-set writes.
    public func version(of property: String) -> UInt64? {
        shared.inner.withLock { $0.state.version(of: property) }
    }

    /// How many of this view's writes the host has not confirmed yet.
    public var pendingWriteCount: Int { shared.inner.withLock { $0.state.pending.count } }

    /// Whether some of this view's writes wait for the replica's loop to hand them to the
    /// socket: a test that queues writes behind a paused host waits for this to be `false`
    /// before it lets the host go, so that the writes arrive together.
    @_spi(Testing)
    public var hasUnsentWrites: Bool { shared.inner.withLock { $0.state.hasUnsentWrites } }

    /// The names of properties whose visible value changed, coalesced. Ends at close.
    public var changes: PropertyChanges { PropertyChanges(feed: shared.feed) }

    /// Each element is the new ``sequence``: update batches or a snapshot were applied,
    /// coalesced per turn of the replica's I/O loop. Unlike
    /// ``changes`` it fires even when no visible value changed, such as when the host's
    /// broadcast of this view's own write arrives back. Ends at close.
    public var sequenceChanges: SequenceChanges {
        SequenceChanges(feed: shared.progress) { [shared] in shared.inner.withLock { $0.state.sequence } }
    }

    /// Counters for tools and benchmarks: how the replica has kept in step so far.
    public var statistics: ReplicaStatistics {
        ReplicaStatistics(
            appliedUpdates: shared.appliedUpdates.load(ordering: .relaxed),
            appliedSnapshots: shared.appliedSnapshots.load(ordering: .relaxed),
            sequenceGaps: shared.sequenceGaps.load(ordering: .relaxed),
            reconnections: shared.reconnections.load(ordering: .relaxed),
            restartedJoins: shared.restartedJoins.load(ordering: .relaxed)
        )
    }

    /// Each element is the new ``connectionState`` (also sent when ``lastError`` changes).
    /// Ends at close.
    public var connectionChanges: ConnectionStateChanges {
        ConnectionStateChanges(feed: shared.connectionFeed) { [shared] in shared.inner.withLock { $0.connection } }
    }

    /// Waits until the replica is live (joined and in step).
    /// - Parameter timeout: how long to wait.
    /// - Throws: `StateBusError` `.timeout` naming the state it was stuck in and the last
    ///   error, or the host's error (`unknownObject`), `unsafeEndpoint` (the endpoint is in a
    ///   runtime folder that is not private), or `.closed`.
    public func waitUntilLive(timeout: Duration = .seconds(10)) async throws {
        // The connection's changes only (they include lastError's): an observer of values
        // would have the first snapshot build a set of every property's name (4 MB for
        // 100,000 properties) for a wait that does not look at values.
        try await waitFor(timeout: timeout, "the replica of '\(object)' to be live", observing: [FeedWakeUps(shared.connectionFeed)]) { replica in
            // Errors that waiting cannot cure end the wait at once.
            if let error = replica.lastError, [.unknownObject, .unsafeEndpoint, .forbidden, .handshakeFailed].contains(error.code) { throw error }
            if replica.connectionState == .closed { throw StateBusError(.closed, "the replica is closed", object: replica.object) }
            return replica.connectionState == .live
        }
    }

    /// Waits until `condition` holds, checking after every change of a value, the connection,
    /// the sequence, or the host's answer to a write.
    /// - Parameters:
    ///   - timeout: how long to wait.
    ///   - what: a description for the timeout error.
    ///   - condition: checked now and after each change; may throw to stop waiting.
    /// - Throws: `StateBusError.timeout` with the last state seen.
    public func waitFor(timeout: Duration, _ what: String, _ condition: @escaping @Sendable (Replica) throws -> Bool) async throws {
        let feeds = [FeedWakeUps(shared.feed), FeedWakeUps(shared.connectionFeed), FeedWakeUps(shared.progress), FeedWakeUps(shared.writeOutcomes)]
        try await waitFor(timeout: timeout, what, observing: feeds, condition)
    }

    /// ``waitFor(timeout:_:_:)`` checking after the events of the given feeds only.
    /// - Parameter feeds: observations the caller started before this call, so that no
    ///   event between them and the first check is missed.
    func waitFor(
        timeout: Duration, _ what: String, observing feeds: [FeedWakeUps], _ condition: @escaping @Sendable (Replica) throws -> Bool
    ) async throws {
        if try condition(self) { return }
        let met = try await withDeadline(timeout) { [self] in
            // One observer per feed; the first to end decides, and the others stop.
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for wakeUps in feeds {
                    group.addTask { [self] in
                        while await wakeUps.next() { if try condition(self) { return true } }
                        return try condition(self)
                    }
                }
                defer { group.cancelAll() }
                return try await group.next() ?? false
            }
        }
        // `met` is nil when the deadline passed first.
        if try met == true || condition(self) { return }
        // A finished observer (closed replica) or the deadline: report the timeout.
        let error = lastError.map { "; last error: \($0)" } ?? ""
        throw StateBusError(
            .timeout,
            "timed out after \(timeout) waiting for \(what); state \(connectionState), sequence \(sequence), values \(Value.map(values))\(error)",
            object: object)
    }

    // MARK: Writing

    /// Writes one property (or a part of it): shown at once, sent to the host in order.
    /// - Parameters:
    ///   - property: the property's name.
    ///   - value: the new value.
    ///   - path: where inside the property's value; `.root` for all of it.
    ///   - expectedVersion: compare-and-set: apply only if the property is still at this version.
    /// - Returns: a receipt; await ``WriteReceipt/accepted()`` for the host's verdict.
    @discardableResult
    public func write(_ property: String, to value: Value, at path: ValuePath = .root, expectedVersion: UInt64? = nil) -> WriteReceipt {
        write([PropertyChange(property, at: path, to: value, expectedVersion: expectedVersion)])
    }

    /// Writes several properties as one batch: the host applies all or none.
    ///
    /// The write shows at once and goes to the host in order. It fails (and disappears from
    /// what the view shows) when the host rejects it, when no answer comes within
    /// ``ReplicaConfiguration/writeTimeout`` (`timeout`), or at once, unshown, when the
    /// replica's write queue is full (`overloaded`; ``write(_:waitingUpTo:)`` waits instead).
    /// - Returns: a receipt for the batch.
    @discardableResult
    public func write(_ changes: [PropertyChange]) -> WriteReceipt {
        switch admit(changes) {
        case .admitted(let receipt): return receipt
        case .full(let error), .closed(let error):
            let receipt = WriteReceipt(writeID: 0)
            receipt.complete(.failure(error))
            return receipt
        }
    }

    /// Writes several properties as one batch once the replica's write queue has room,
    /// waiting up to `timeout` for it: the back-pressure a producer of many writes needs.
    /// - Returns: the write's receipt; await ``WriteReceipt/accepted()`` for the verdict.
    /// - Throws: `StateBusError` `overloaded` when the queue stayed full until the deadline,
    ///   `closed` when the replica closed.
    public func write(_ changes: [PropertyChange], waitingUpTo timeout: Duration) async throws -> WriteReceipt {
        let deadline = ContinuousClock.now + timeout
        while true {
            switch admit(changes) {
            case .admitted(let receipt): return receipt
            case .closed(let error): throw error
            case .full(let error):
                let left = deadline - .now
                guard left > .zero else { throw error }
                // Room comes back with the host's answers (or expiries): wait for one.
                do {
                    try await waitFor(timeout: left, "room in the write queue") { replica in
                        if replica.connectionState == .closed { throw StateBusError(.closed, "the replica is closed", object: replica.object) }
                        return replica.shared.inner.withLock { replica.hasRoom(in: $0, for: changes) }
                    }
                } catch let waited as StateBusError where waited.code == .timeout {
                    throw error
                }
            }
        }
    }

    private enum Admission {
        case admitted(WriteReceipt)
        case full(StateBusError)
        /// The replica is closed: no write is made (nothing would send or expire it).
        case closed(StateBusError)
    }

    private func hasRoom(in inner: ReplicaShared.Inner, for changes: [PropertyChange]) -> Bool {
        let bytes = changes.reduce(0) { $0 + $1.approximateBytes }
        return inner.state.pending.count < configuration.maxQueuedWrites
            && (inner.state.queuedBytes + bytes <= configuration.maxQueuedWriteBytes || inner.state.pending.isEmpty)
    }

    /// Makes the write when the queue has room (it then shows at once and is sent in order).
    private func admit(_ changes: [PropertyChange]) -> Admission {
        let bytes = changes.reduce(0) { $0 + $1.approximateBytes }
        let deadline = ContinuousClock.now + configuration.writeTimeout
        enum Outcome {
            case made(WriteReceipt, changed: Set<String>)
            case full, closed
        }
        // Checked under the lock `close()` sets `.closed` with: a write admitted before that
        // is failed by the close, one after it is refused here.
        let outcome = shared.inner.withLock { inner -> Outcome in
            guard inner.connection != .closed else { return .closed }
            guard hasRoom(in: inner, for: changes) else { return .full }
            let id = inner.nextWriteID
            inner.nextWriteID += 1
            let receipt = WriteReceipt(writeID: id)
            inner.receipts[id] = receipt
            return .made(receipt, changed: inner.state.localWrite(id: id, changes: changes, deadline: deadline, bytes: bytes))
        }
        let receipt: WriteReceipt
        let changed: Set<String>
        switch outcome {
        case .made(let made, let names): (receipt, changed) = (made, names)
        case .closed: return .closed(StateBusError(.closed, "the replica is closed; the write was not made", object: object))
        case .full:
            let (count, queued) = shared.inner.withLock { ($0.state.pending.count, $0.state.queuedBytes) }
            return .full(
                StateBusError(
                    .overloaded,
                    "the replica already has \(count) writes (about \(queued) bytes) waiting for the host, the most its queue holds "
                        + "(ReplicaConfiguration.maxQueuedWrites \(configuration.maxQueuedWrites), maxQueuedWriteBytes \(configuration.maxQueuedWriteBytes)); "
                        + "the write was not made: wait for answers, or use write(_:waitingUpTo:)",
                    object: object))
        }
        shared.feed.notify(changed)
        let promise = self.promise
        // On the loop thread (a task that prefers ``executor``), the write goes out now: no
        // wake-up of the loop, which is this thread.
        if loop.isOnLoopThread, let engine = promise.value {
            engine.value.flushWrites()
        } else if !loop.execute({ _ in promise.value?.value.flushWrites() }) {
            shared.complete(writeID: receipt.writeID, with: .failure(StateBusError(.closed, "the replica is closed", object: object)))
        }
        return .admitted(receipt)
    }
}

/// How a replica has kept in step with its host: see ``Replica/statistics``.
///
/// A replica applies update batches only in sequence order, each exactly once; a gap or a
/// new epoch makes it take a fresh snapshot instead. So a replica that joined once
/// (`appliedSnapshots == 1`) and applied `n` updates saw every one of those `n` batches, in
/// order.
public struct ReplicaStatistics: Sendable, Hashable {
    /// Update batches applied in order from the updates stream (not counting snapshots).
    public let appliedUpdates: Int
    /// Snapshots applied: 1 after the join, one more per resynchronisation.
    public let appliedSnapshots: Int
    /// Why resynchronisations happened, part 1: sequence gaps seen on the updates stream.
    /// The host dropped publications for this replica because it was slower than the host's
    /// subscriber queue allows (``HostLimits/subscriberQueueBytes``), or a heartbeat
    /// announced a sequence this replica never received.
    public let sequenceGaps: Int
    /// Why resynchronisations happened, part 2: connections made again after the first: no
    /// heartbeat for too long, a new host epoch, or the host not knowing the connection.
    public let reconnections: Int
    /// Joins started again because updates that arrived during the join passed
    /// ``ReplicaLimits/maxJoinBufferBytes``.
    public let restartedJoins: Int
}

/// Hands the engine, made on the loop thread, to the replica. Set once on the loop thread,
/// then read there only (through `LoopBound`).
final class LoopBoundPromise<Value>: Sendable {
    private let stored = Locked<LoopBound<Value>?>(nil)
    func fulfil(_ value: LoopBound<Value>) { stored.withLock { $0 = value } }
    var value: LoopBound<Value>? { stored.withLock { $0 } }
}
