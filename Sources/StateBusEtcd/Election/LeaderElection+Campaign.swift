// The campaign loop: grant a lease, try to create the leader key with it, then lead or
// follow; after a term ends or the leader key goes, do it again with a new lease.

extension LeaderElection {
    /// Runs until the task is cancelled by ``resign()``.
    func campaign() async {
        var backoff = RetryBackoff()
        while !Task.isCancelled {
            // The lease cannot end before this instant plus its TTL: etcd starts it later.
            let grantSent = ContinuousClock.now
            let lease: EtcdLease
            do {
                lease = try await client.grantLease(ttlSeconds: leaseTTLSeconds)
            } catch {
                if Task.isCancelled { return }
                logger.warning("election could not get a lease from etcd; retrying", metadata: ["group": "\(group)", "error": "\(error)"])
                await backoff.pause()
                continue
            }
            state.withLock { $0.lease = lease.id }
            let result: EtcdTransactionResult
            do {
                result = try await client.txn(
                    EtcdTransaction(
                        compares: [.missing(leaderKey)],
                        success: [.put(key: leaderKey, value: candidate, lease: lease.id)],
                        failure: [.range(key: leaderKey)]))
            } catch {
                // The transaction may have been applied; revoking the lease removes the key
                // it may have created, so that nobody waits for it to expire.
                await revokeBestEffort(lease.id)
                if Task.isCancelled { return }
                logger.warning("election could not campaign in etcd; retrying", metadata: ["group": "\(group)", "error": "\(error)"])
                await backoff.pause()
                continue
            }
            backoff.reset()
            if result.succeeded {
                // The revision of the transaction that created the key is its create revision.
                let leadership = Leadership(createRevision: result.revision, leaseID: lease.id)
                let validUntil = grantSent + .seconds(lease.ttlSeconds) - safetyMargin
                await lead(leadership, grantedTTL: lease.ttlSeconds, validUntil: validUntil, renewedAt: grantSent)
                await revokeBestEffort(lease.id)
            } else {
                await revokeBestEffort(lease.id)
                let leader: EtcdKeyValue? =
                    if case .range(let found)? = result.responses.first { found.first } else { nil }
                guard let leader else {
                    // A failed compare means the key existed, and the range in the same
                    // transaction sees it; should it not, report the leader as unknown and
                    // campaign again.
                    state.withLock { $0.follow(leader: nil, revision: 0) }
                    await backoff.pause()
                    continue
                }
                await follow(leader, watchFrom: result.revision + 1)
            }
        }
    }
}
