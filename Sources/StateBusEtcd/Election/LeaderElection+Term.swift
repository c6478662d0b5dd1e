// Holding a term: renew the lease every third of its TTL, reckon its end from the time taken
// before each renewal, and step down when that end passes, etcd says the lease is gone, or the
// leader key is no longer the one this term created.

extension LeaderElection {
    /// Leads until the term ends, or the task is cancelled by ``resign()``.
    /// - Parameters:
    ///   - leadership: the term won.
    ///   - grantedTTL: the lease's TTL in seconds, as etcd granted it.
    ///   - validUntil: the term's end as known from the grant.
    ///   - renewedAt: when the grant was sent, from which the next renewal is scheduled.
    func lead(_ leadership: Leadership, grantedTTL: Int64, validUntil initialValidity: ContinuousClock.Instant, renewedAt: ContinuousClock.Instant)
        async
    {
        var validUntil = initialValidity
        let began = state.withLock { $0.beginTerm(leadership, validUntil: validUntil, now: .now) }
        guard began else { return }
        logger.info(
            "leading the election", metadata: ["group": "\(group)", "revision": "\(leadership.createRevision)", "lease": "\(leadership.leaseID)"])
        let renewInterval = Duration.seconds(grantedTTL) / 3
        var nextRenewal = renewedAt + renewInterval
        var backoff = RetryBackoff()
        while true {
            do {
                try await Task.sleep(until: min(nextRenewal, validUntil), clock: .continuous)
            } catch {
                return
            }
            if ContinuousClock.now >= validUntil {
                return stepDown("the lease could not be renewed before it could expire (etcd did not answer in time)")
            }
            let sent = ContinuousClock.now
            let renewal = await boundedCall(until: validUntil) { [client] in try await client.keepAlive(lease: leadership.leaseID) }
            switch renewal {
            case .answered(let ttl) where ttl > 0:
                validUntil = max(validUntil, sent + .seconds(ttl) - safetyMargin)
                state.withLock { $0.renew(validUntil: validUntil) }
                nextRenewal = sent + renewInterval
                backoff.reset()
            case .answered:
                return stepDown("etcd says the lease is gone (it expired or was revoked)")
            case .failed(let error):
                logger.warning("could not renew the leader's lease; retrying", metadata: ["group": "\(group)", "error": "\(error)"])
                await backoff.pause()
                continue
            case .deadlinePassed:
                return stepDown("the lease could not be renewed before it could expire (etcd did not answer in time)")
            case .cancelled:
                return
            }
            // The lease lives, but the key may have been deleted or taken over by hand.
            let check = await boundedCall(until: validUntil) { [client, leaderKey] in try await client.get(key: leaderKey) }
            switch check {
            case .answered(let found) where found.keyValue?.createRevision != leadership.createRevision:
                return stepDown("the leader key was deleted or taken over")
            case .cancelled:
                return
            case .answered, .failed, .deadlinePassed:
                break
            }
        }
    }

    /// Ends the term: from here on ``isLeader(at:)`` is false and subscribers hear why.
    private func stepDown(_ reason: String) {
        logger.warning("stepped down as leader", metadata: ["group": "\(group)", "reason": "\(reason)"])
        state.withLock { $0.endTerm(reason: reason) }
    }
}

/// How a call bounded by a deadline ended.
enum BoundedOutcome<T: Sendable> {
    /// etcd answered.
    case answered(T)
    /// The call failed before the deadline.
    case failed(EtcdError)
    /// The deadline came first; the call was abandoned.
    case deadlinePassed
    /// The calling task was cancelled.
    case cancelled
}

/// Runs etcd calls, abandoning them at `deadline`.
/// - Parameter call: calls of ``EtcdClient``, which throw only ``EtcdError``.
func boundedCall<T: Sendable>(
    until deadline: ContinuousClock.Instant, _ call: @escaping @Sendable () async throws -> T
) async -> BoundedOutcome<T> {
    do {
        guard let value = try await withDeadline(until: deadline, call) else { return .deadlinePassed }
        return .answered(value)
    } catch let error as EtcdError where error.kind != .cancelled {
        return .failed(error)
    } catch {
        return .cancelled
    }
}
