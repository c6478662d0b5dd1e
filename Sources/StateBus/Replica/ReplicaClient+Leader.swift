import ZeroMQ

/// Following the leader of a high-availability group: a standby refuses the hello with
/// `NOT_LEADER` and names the leader when it knows it (PROTOCOL.md, "Standby hosts").
extension ReplicaClient {
    /// Handles a standby's refusal of the hello (or of a snapshot request: the host lost its
    /// leadership meanwhile): says hello to the leader it named at once, else asks again
    /// when ``ControlEndpoints/helloRetryDue`` says.
    func followLeader(named leader: String, refusal: StateBusError) {
        let from = controlEndpoint
        if endpoints.standbyRefused(naming: leader, at: .now) {
            logger.info("the host at \(from) is a standby; following the leader at \(controlEndpoint)")
            connect()
            return
        }
        // Visible while no leader is found, as a hello's other refusals are; logged as news,
        // not as a warning: an election is a normal moment in a group's life.
        if endpoints.standbyRefusals > 1 {
            logger.info("\(refusal)")
            shared.inner.withLock { $0.lastError = refusal }
            shared.connectionFeed.notify([.errorChanged])
        }
    }

    /// After a write refused `PERSISTENCE_FAILED` by a host of a group (a leader that lost
    /// etcd serves its views read-only, and cannot know whether another host leads): asks
    /// the other listed hosts, without leaving this one, whether one of them leads, and
    /// joins it if so. Otherwise the view stays, live and read-only.
    func searchForLeader() {
        guard endpoints.hasAlternatives, !endpoints.searchingForLeader, !closed else { return }
        endpoints.searchingForLeader = true
        let others = endpoints.listed.filter { $0 != controlEndpoint }
        let engine = LoopBound(self, on: thread)
        let loop = thread.loop
        let (timeout, security) = (configuration.requestTimeout, configuration.security)
        Task {
            let leader = await ControlProbe.leader(among: others, timeout: timeout, security: security)
            loop.execute { _ in engine.value.leaderSearchEnded(found: leader) }
        }
    }

    /// Joins the leader a search found, if any.
    private func leaderSearchEnded(found leader: String?) {
        endpoints.searchingForLeader = false
        guard let leader, !closed, leader != controlEndpoint else { return }
        logger.info("the host at \(controlEndpoint) takes no writes and \(leader) leads: joining it")
        endpoints.found(leader: leader, at: .now)
        connect()
    }
}
