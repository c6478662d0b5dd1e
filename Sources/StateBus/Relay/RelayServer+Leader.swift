/// The relay as a client of a high-availability group: its upstream may be several hosts
/// (`--upstream a,b`), of which it follows the leader, as a replica does (PROTOCOL.md,
/// "Standby hosts").
extension RelayServer {
    /// Handles a standby's refusal of the relay's hello: joins the leader it named at once,
    /// else asks again when ``ControlEndpoints/helloRetryDue`` says.
    func followUpstreamLeader(named leader: String) {
        let from = upstreamEndpoint
        if upstreamEndpoints.standbyRefused(naming: leader, at: .now) {
            logger.info("the upstream at \(from) is a standby; following the leader at \(upstreamEndpoint)")
            closeUpstream()
            connectUpstream()
            return
        }
        logger.info("the upstream at \(from) is a standby and knows no leader yet; asking again")
    }
}
