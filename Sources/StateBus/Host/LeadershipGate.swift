import StateBusRuntime

/// Whether a host of a high-availability group may take views: only while it leads, and
/// only until its lease may have run out by its own clock.
///
/// The group's election (`statebus host --ha`, on etcd) opens the gate with its check of
/// the lease (true until the last renewal's send time plus the lease, less a margin), and
/// closes it when it stands by. The host asks at every hello, snapshot, write and call; a closed gate answers
/// `NOT_LEADER` naming the leader when known (PROTOCOL.md, "Standby hosts"). Asking reads
/// the clock, so a leader that was paused (SIGSTOP) past its lease refuses from its first
/// request on, before its election code has run again.
package final class LeadershipGate: Sendable {
    private enum Role {
        case leading(while: @Sendable (ContinuousClock.Instant) -> Bool)
        case standingBy(leader: String)
        case readOnly(reason: String)
    }

    private let role: Locked<Role>

    /// A closed gate: a standby that knows no leader yet.
    package init() { role = Locked(.standingBy(leader: "")) }

    /// Opens the gate while `valid` says the lease holds (the election's own check, which its
    /// renewals move on).
    package func lead(while valid: @escaping @Sendable (ContinuousClock.Instant) -> Bool) {
        role.withLock { $0 = .leading(while: valid) }
    }

    /// Closes the gate; `leader` (a control endpoint, empty when unknown) is named in refusals.
    package func standBy(leader: String) {
        role.withLock { $0 = .standingBy(leader: leader) }
    }

    /// Closes the gate to new views and writes, but keeps serving the views already joined
    /// (a leader that lost etcd, while no other host is known to lead): their writes are
    /// refused with `persistenceFailed` and `reason`, which names what was lost.
    package func serveReadOnly(reason: String) {
        role.withLock { $0 = .readOnly(reason: reason) }
    }

    /// Whether the host leads now.
    package func leads(at now: ContinuousClock.Instant = .now) -> Bool {
        refusal(at: now) == nil
    }

    /// The refusal for a request that needs the leader, or `nil` while the host leads.
    /// - Parameter write: whether the request is a write or a call (a read-only host refuses
    ///   them differently: its views stay).
    func refusal(write: Bool = false, at now: ContinuousClock.Instant = .now) -> (error: StateBusError, leader: String)? {
        switch role.withLock({ $0 }) {
        case .readOnly(let reason) where write:
            return (StateBusError(.persistenceFailed, "\(reason): the write was not applied; try again once it leads"), "")
        case .readOnly(let reason):
            return (StateBusError(.notLeader, "\(reason); it takes no new views until it leads again"), "")
        case .leading(let valid) where valid(now):
            return nil
        case .leading:
            return (
                StateBusError(
                    .notLeader,
                    "this host's leadership lease ran out before it could renew it (etcd unreachable, or the host was paused): "
                        + "it takes no writes until it leads again; another host of the group may lead meanwhile"),
                ""
            )
        case .standingBy(let leader):
            let named = leader.isEmpty ? "no leader is known yet (an election is under way): try again shortly" : "the leader is at \(leader)"
            return (StateBusError(.notLeader, "this host is a standby of its high-availability group; \(named)"), leader)
        }
    }
}
