import Logging
import StateBusRuntime

/// One candidate in a group's leader election on etcd, the way etcd's own
/// `concurrency.Election` does it: the leader is whoever created the group's leader key,
/// attached to a lease it keeps alive.
///
/// A candidate grants a lease and campaigns with a transaction that creates
/// `/statebus/<group>/leader` (holding its `candidate` record) only if the key does not exist.
/// The winner renews its lease every third of the TTL and holds its term until
/// ``isLeader(at:)`` turns false: that is the send time of its last successful renewal plus
/// the TTL minus ``safetyMargin``, which etcd's lease never ends before. It steps down when
/// that instant passes without a renewal, whatever the request in flight is doing, and when
/// etcd says the lease or key is gone. The others watch the key and campaign again when it
/// is deleted (checking it again every TTL in case the watch broke). While etcd does not
/// answer, every candidate retries with pauses of at most 250 ms.
///
/// ```swift
/// let election = try LeaderElection(client: etcd, group: "orders", candidate: record, logger: logger)
/// let events = election.events()
/// election.start()
/// for await event in events {
///     switch event {
///     case .leading(let term): serve(fencedBy: election.fencingCompare(for: term))
///     case .following(let leader, _): redirect(to: leader)
///     case .steppedDown: stopServing()
///     }
/// }
/// // On SIGTERM: await election.resign()
/// ```
///
/// Before acknowledging a write, a leader checks ``isLeader(at:)``, and commits durable
/// writes behind ``fencingCompare(for:)``, so that a deposed leader's late write fails.
///
/// Thread safety: every method may be called from any thread or task. The campaign runs in
/// its own task from ``start()`` until ``resign()``, which must be called to end it.
public final class LeaderElection: Sendable {
    /// The group's name.
    public let group: String
    /// The key whose creator leads: `/statebus/<group>/leader`.
    public let leaderKey: [UInt8]
    /// This candidate's record, stored as the leader key's value while it leads.
    public let candidate: [UInt8]
    /// The lease TTL asked for, in whole seconds.
    public let leaseTTLSeconds: Int64
    /// How much earlier than the lease's earliest possible end this candidate stops calling
    /// itself leader: the larger of 10 % of the TTL and 100 ms. It covers the difference in
    /// clock rates between this host and etcd, and the time a leader needs to stop acting.
    public let safetyMargin: Duration
    let client: EtcdClient
    let logger: Logger
    let state = Locked(ElectionState())

    /// Creates a candidate; ``start()`` enters it into the election.
    /// - Parameters:
    ///   - client: the etcd client; the election does not shut it down.
    ///   - group: the group's name: letters, digits, `.`, `_` and `-`.
    ///   - candidate: this candidate's record, such as JSON with its control endpoint, which
    ///     the others receive in ``Event/following(leader:revision:)``.
    ///   - leaseTTL: how long the leader key outlives a leader that stopped renewing, rounded up
    ///     to whole seconds (etcd may raise it to its minimum). Failover takes about this long
    ///     after a crash, and next to nothing after ``resign()``.
    ///   - logger: where the election logs its changes and etcd failures.
    /// - Throws: ``EtcdError`` of kind `invalidArgument` for a bad group name or TTL.
    public init(client: EtcdClient, group: String, candidate: [UInt8], leaseTTL: Duration = .seconds(2), logger: Logger) throws(EtcdError) {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        guard !group.isEmpty, group.allSatisfy(allowed.contains) else {
            throw EtcdError(
                .invalidArgument, endpoints: [],
                message: "Invalid election group name \"\(group)\": use letters, digits, '.', '_' and '-' only, at least one")
        }
        guard leaseTTL > .zero else {
            throw EtcdError(.invalidArgument, endpoints: [], message: "The election's lease TTL must be positive, not \(leaseTTL)")
        }
        let (seconds, attoseconds) = leaseTTL.components
        leaseTTLSeconds = seconds + (attoseconds > 0 ? 1 : 0)
        safetyMargin = max(.seconds(leaseTTLSeconds) / 10, .milliseconds(100))
        self.client = client
        self.group = group
        self.candidate = candidate
        self.logger = logger
        leaderKey = Array("/statebus/\(group)/leader".utf8)
    }

    /// Enters the election: campaigns in a new task until ``resign()``. Calling it again, or
    /// after ``resign()``, does nothing.
    public func start() {
        _ = state.withLock { state in
            state.start { Task { await self.campaign() } }
        }
    }

    /// The role changes from now on, starting with the current role when there is one.
    ///
    /// Each call returns a new stream; every stream gets every event, in order. The streams end
    /// after ``resign()``.
    public func events() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream()
        guard let id = state.withLock({ $0.subscribe(continuation) }) else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { $0.unsubscribe(id) }
        }
        return stream
    }

    /// Whether this candidate may act as leader at `now`: it won a term and renewed its lease
    /// recently enough that etcd cannot have ended it yet.
    ///
    /// It reads the clock, not the campaign's progress: after the process was stopped
    /// (SIGSTOP) for longer than the lease, it says false at once, before the campaign has
    /// run. Call it right before acknowledging a write. Never blocks on I/O.
    public func isLeader(at now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { $0.validTerm(at: now) != nil }
    }

    /// The term this candidate holds now, or nil when it is not the leader now.
    public var currentLeadership: Leadership? {
        let now = ContinuousClock.now
        return state.withLock { $0.validTerm(at: now)?.leadership }
    }

    /// The instant until which the current term is safe, or nil when not leading now.
    public var leadershipValidUntil: ContinuousClock.Instant? {
        let now = ContinuousClock.now
        return state.withLock { $0.validTerm(at: now)?.validUntil }
    }

    /// The compare that holds only while `leadership`'s term lasts: the leader key still has
    /// the create revision it had when this candidate created it. Put it in every durable
    /// write's transaction; a write that fails it comes from a deposed leader.
    public func fencingCompare(for leadership: Leadership) -> EtcdCompare {
        EtcdCompare(key: leaderKey, .createRevision(leadership.createRevision), .equal)
    }

    /// Leaves the election: stops campaigning, ends the term at once (``isLeader(at:)`` is
    /// false from now on), revokes the lease so that the leader key goes now and another
    /// candidate takes over without waiting for the TTL, and ends the event streams. Call it
    /// on SIGTERM. The revoke is best effort: if etcd does not answer, the key lasts until its
    /// lease expires.
    public func resign() async {
        let task = state.withLock { state in
            state.endTerm(reason: "resigned")
            return state.resign()
        }
        task?.cancel()
        await task?.value
        if let lease = state.withLock({ $0.lease }) {
            await revokeBestEffort(lease)
        }
        for continuation in state.withLock({ $0.takeSubscribers() }) {
            continuation.finish()
        }
    }

    /// Revokes a lease, logging a failure rather than throwing: the lease ends by itself later.
    /// Does nothing in a cancelled task: ``resign()`` revokes the lease it leaves behind.
    func revokeBestEffort(_ lease: Int64) async {
        guard !Task.isCancelled else { return }
        do {
            try await client.revoke(lease: lease)
        } catch  where error.kind == .leaseNotFound {
            // Already gone, which is what was wanted.
        } catch {
            logger.debug("could not revoke the election lease; it ends by itself", metadata: ["group": "\(group)", "error": "\(error)"])
            return
        }
        state.withLock { state in
            if state.lease == lease { state.lease = nil }
        }
    }
}
