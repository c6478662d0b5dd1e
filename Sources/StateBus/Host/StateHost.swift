import Dispatch
import Logging
import StateBusWire
import ZeroMQ

/// The source of truth: serves named shared objects to views in other processes.
///
/// A host binds a control endpoint (views say hello, ask for snapshots and write there) and
/// an updates endpoint (it publishes every applied change there). Each start draws a fresh
/// epoch; every applied batch of an object gets that object's next sequence number.
///
/// ```swift
/// let host = try await StateHost(objects: [
///     ObjectDefinition("SharedData", properties: [PropertyDefinition("sharedText", default: "")])
/// ], configuration: HostConfiguration(controlEndpoint: "tcp://127.0.0.1:*"))
/// try host.update("sharedText", to: "hello", in: "SharedData")
/// ```
///
/// All methods are thread-safe. Host-side changes apply at once (reads see them
/// immediately) and are published by the host's I/O loop soon after, in order.
public final class StateHost: Sendable {
    /// This run's epoch: random, fresh at every start.
    public let epoch: UInt64
    /// The control endpoint actually bound (the real port for `tcp://…:*`).
    public let controlEndpoint: String
    /// The updates endpoint actually bound.
    public let updatesEndpoint: String
    /// The objects served.
    public let objects: [ObjectDefinition]

    let state: SourceOfTruth
    let loop: IOLoop
    let engine: LoopBound<HostServer>
    let counters = HostCounters()
    /// The code that runs the actions of objects served from models.
    let actionHandlers = ActionHandlers()
    let logger: Logger

    /// Starts a host: binds its sockets and begins serving.
    /// - Parameters:
    ///   - objects: the objects to serve; names must be unique.
    ///   - configuration: endpoints and behaviour.
    ///   - context: the ZeroMQ context to use (default: a new one).
    /// - Throws: `StateBusError` for duplicate names or a ``HostConfiguration/pinnedCPU`` this process
    ///   may not run on, `ZeroMQError` when a bind fails
    ///   (for example `addressInUse`).
    public init(objects: [ObjectDefinition], configuration: HostConfiguration = HostConfiguration(), context: Context? = nil) async throws {
        var seen = Set<String>()
        for object in objects {
            guard seen.insert(object.name).inserted else {
                throw StateBusError(.badRequest, "two objects are named '\(object.name)'; object names must be unique per host", object: object.name)
            }
            var properties = Set<String>()
            for property in object.properties where !properties.insert(property.name).inserted {
                throw StateBusError(.badRequest, "two properties are named '\(property.name)'", object: object.name, property: property.name)
            }
        }
        let epoch = UInt64.random(in: 1...UInt64.max)
        let state = SourceOfTruth(epoch: epoch, objects: objects, limits: configuration.limits)
        let cpu = configuration.pinnedCPU
        try PinnedCPU.check(cpu, setting: "HostConfiguration.pinnedCPU")
        let loop = try IOLoop(context: try context ?? Context(ioThreadCPU: cpu), name: "statebus-host", cpu: cpu)
        let counters = self.counters
        let actionHandlers = self.actionHandlers
        do {
            engine = try await loop.submit { thread in
                LoopBound(
                    try HostServer(
                        thread: thread, state: state, objects: objects, actions: actionHandlers, configuration: configuration, counters: counters),
                    on: thread)
            }
        } catch {
            loop.shutdown()
            throw error
        }
        let endpoints = try await loop.submit { [engine] _ in (engine.value.controlEndpoint, engine.value.updatesEndpoint) }
        self.epoch = epoch
        self.state = state
        self.loop = loop
        self.objects = objects
        self.logger = configuration.logger
        controlEndpoint = endpoints.0
        updatesEndpoint = endpoints.1
        logger.info("host started", metadata: ["control": "\(controlEndpoint)", "updates": "\(updatesEndpoint)", "epoch": "\(epoch)"])
    }

    deinit { loop.shutdown() }

    /// Stops serving: closes the sockets and ends every ``changes(of:)`` sequence.
    /// Views notice through missing heartbeats. Safe to call more than once.
    public func stop() {
        actionHandlers.removeAll()
        for feed in state.feeds { feed.finish() }
        loop.shutdown()
        state.hostStopped()
    }

    // MARK: Reading

    /// Every property's current value of an object, or `nil` for an unknown object.
    public func values(of object: String) -> [String: Value]? {
        state.withStore(object) { $0.namedValues }
    }

    /// One property's current value, or `nil` when the object or property is unknown.
    public func value(of property: String, in object: String) -> Value? {
        state.withStore(object) { $0.value(of: property) } ?? nil
    }

    /// The object's sequence number: how many batches have been applied to it this epoch.
    public func sequence(of object: String) -> UInt64? {
        state.withStore(object) { $0.sequence }
    }

    /// The sequence at which a property last changed (0: never this epoch), for
    /// compare-and-set.
    public func version(of property: String, in object: String) -> UInt64? {
        state.withStore(object) { $0.version(of: property) ?? 0 }
    }

    /// The names of properties that change, from views' writes or the host's own, coalesced.
    /// Ends when the host stops.
    public func changes(of object: String) -> PropertyChanges {
        PropertyChanges(
            feed: state.feed(of: object)
                ?? {
                    let closed = ChangeFeed<String>()
                    closed.finish()
                    return closed
                }())
    }

    /// What the host has handled so far.
    public var statistics: HostStatistics { counters.snapshot }

    // MARK: Writing

    /// Updates a property (or a part of it) as the host, the owner of the truth: no
    /// validators run (they judge views' writes), the type is checked. The update is
    /// published to every view like an accepted write.
    /// - Parameters:
    ///   - property: the property's name.
    ///   - value: the new value.
    ///   - path: where inside the property's value; `.root` for all of it.
    ///   - object: the object's name.
    /// - Returns: the batch's sequence number.
    /// - Throws: `StateBusError` (`unknownObject`, `unknownProperty`, `typeMismatch`, `invalidPath`;
    ///   `overloaded` when the queue of changes to publish stayed full, see
    ///   ``HostLimits/maxUnpublishedBytes``).
    @discardableResult
    public func update(_ property: String, to value: Value, at path: ValuePath = .root, in object: String) throws(StateBusError) -> UInt64 {
        let result = try state.apply(PropertyChange(property, at: path, to: value), to: object, roomWait: roomWait)
        schedulePublish(if: result.schedulePublish)
        return result.sequence
    }

    /// How long a change of the host's own may wait for room in the queue of changes to
    /// publish (``HostLimits/maxUnpublishedBytes``): on the loop's own thread not at all,
    /// since the loop takes the queue only once its turn ends.
    var roomWait: Duration? {
        loop.isOnLoopThread ? nil : state.limits.unpublishedRoomWait
    }

    /// Has the loop publish what is queued, when the source of truth asked for it (the first
    /// change queued since the last publication; a burst's changes wait for its timer).
    private func schedulePublish(if needed: Bool) {
        guard needed else { return }
        let engine = self.engine
        loop.execute { _ in engine.value.publishPending() }
    }

    /// Applies several changes to one object as one batch: views see all or none of them.
    /// - Returns: the batch's sequence number.
    /// - Throws: `StateBusError`; nothing is applied then.
    @discardableResult
    public func apply(_ changes: [PropertyChange], to object: String) throws(StateBusError) -> UInt64 {
        let result = try state.apply(changes, to: object, fromView: nil, writeID: 0, roomWait: roomWait)
        schedulePublish(if: result.schedulePublish)
        return result.sequence
    }

    /// Starts keeping an object's changes for one follower (the host's model's bus): element
    /// edits to repeat, and which properties changed any other way (``takeFollowed(_:whole:)``).
    /// - Returns: the object's values now, the follower's starting point.
    func follow(_ object: String) -> [String: Value] {
        state.withStoreFollowing(object) { $0.follow() } ?? [:]
    }

    /// What changed in an object since ``follow(_:)`` or the last call, read under one lock:
    /// element edits to repeat, and the values of the properties that changed any other way
    /// or are in `whole`.
    func takeFollowed(_ object: String, whole: Set<String>) -> (edits: [String: [ElementEdit]], values: [String: Value]) {
        state.withStoreFollowing(object) { $0.takeFollowed(whole: whole) } ?? ([:], [:])
    }

    /// Stops keeping an object's changes for a follower (its bus detached).
    func unfollow(_ object: String) {
        _ = state.withStoreFollowing(object) { $0.unfollow() }
    }

    /// Notes that the follower changed these properties itself, or tried to (a write the
    /// host refused): they are given whole next time.
    func followerChanged(_ properties: some Sequence<String>, of object: String) {
        _ = state.withStoreFollowing(object) { $0.followerChanged(properties) }
    }

    /// Fault injection for tests: the next `count` update publications are not sent, as if
    /// lost on the wire, so views must detect the gap and resynchronise. Heartbeats and join
    /// markers are never dropped, so the lost ones are the next updates.
    @_spi(Testing)
    public func dropNextPublicationsForTesting(_ count: Int) {
        counters.publicationsToDrop.store(count, ordering: .relaxed)
    }

    /// Fault injection for tests: the next `count` replies on the control socket are not
    /// sent, as if lost on the wire, so views must cope (a write's echo still confirms it).
    @_spi(Testing)
    public func dropNextRepliesForTesting(_ count: Int) {
        counters.repliesToDrop.store(count, ordering: .relaxed)
    }

    /// Fault injection for tests: holds the host's I/O loop until the returned closure is
    /// called, so work queues up (as under load) and is then handled in one turn.
    @_spi(Testing)
    public func pauseLoopForTesting() async -> @Sendable () -> Void {
        let gate = DispatchSemaphore(value: 0)
        await withCheckedContinuation { (paused: CheckedContinuation<Void, Never>) in
            loop.execute { _ in
                paused.resume()
                gate.wait()
            }
        }
        return { gate.signal() }
    }
}
