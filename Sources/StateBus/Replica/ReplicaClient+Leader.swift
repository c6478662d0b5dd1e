/// Following the leader of a high-availability group: a standby refuses the hello with
/// `NOT_LEADER` and names the leader when it knows it (PROTOCOL.md, "Standby hosts").
extension ReplicaClient {
    /// Handles a standby's refusal of the hello (or of a snapshot request: the host lost its
    /// leadership meanwhile): says hello to the leader it named at once, else asks again
    /// after a pause that grows with refusals in a row, up to 200 ms: an election takes
    /// about a lease, and the view should not wait much past its end.
    func followLeader(named leader: String, refusal: StateBusError) {
        standbyRefusals += 1
        let now = ContinuousClock.now
        let from = controlEndpoint
        if endpoints.follow(leader: leader, refusalsInARow: standbyRefusals, at: now) {
            logger.info("the host at \(from) is a standby; following the leader at \(controlEndpoint)")
            connect()
            return
        }
        // Visible while no leader is found, as a hello's other refusals are; logged as news,
        // not as a warning: an election is a normal moment in a group's life.
        if standbyRefusals > 1 {
            logger.info("\(refusal)")
            shared.inner.withLock { $0.lastError = refusal }
            shared.connectionFeed.notify([.errorChanged])
        }
        let pause = Duration.milliseconds(25) * (1 << min(standbyRefusals - 1, 3))
        leaderRetryDue = now + pause
    }
}
