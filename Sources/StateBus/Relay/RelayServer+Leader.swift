/// The relay as a client of a high-availability group: its upstream may be several hosts
/// (`--upstream a,b`), of which it follows the leader, as a replica does (PROTOCOL.md,
/// "Standby hosts").
extension RelayServer {
    /// Handles a standby's refusal of the relay's hello: joins the leader it named at once,
    /// else asks again after a pause that grows with refusals in a row, up to 200 ms.
    func followUpstreamLeader(named leader: String) {
        upstreamStandbyRefusals += 1
        let now = ContinuousClock.now
        let from = upstreamEndpoint
        if upstreamEndpoints.follow(leader: leader, refusalsInARow: upstreamStandbyRefusals, at: now) {
            logger.info("the upstream at \(from) is a standby; following the leader at \(upstreamEndpoint)")
            closeUpstream()
            connectUpstream()
            return
        }
        logger.info("the upstream at \(from) is a standby and knows no leader yet; asking again")
        upstreamRetryDue = now + .milliseconds(25) * (1 << min(upstreamStandbyRefusals - 1, 3))
    }
}
