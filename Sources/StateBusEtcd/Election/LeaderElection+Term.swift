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
    func lead(_ leadership: Leadership, grantedTTL: Int64, validUntil: ContinuousClock.Instant, renewedAt: ContinuousClock.Instant) async {
        let began = state.withLock { $0.beginTerm(leadership, validUntil: validUntil, now: .now) }
        guard began else { return }
        logger.info(
            "leading the election", metadata: ["group": "\(group)", "revision": "\(leadership.createRevision)", "lease": "\(leadership.leaseID)"])
        // Renewing and watching the key run side by side; whichever ends the term first
        // (having stepped down already) ends the other.
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.renew(leadership, grantedTTL: grantedTTL, validUntil: validUntil, renewedAt: renewedAt) }
            group.addTask { await self.watchOwnKey(leadership) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Renews the term's lease every third of its TTL until the term ends; returns when it
    /// stepped down or was cancelled.
    private func renew(
        _ leadership: Leadership, grantedTTL: Int64, validUntil initialValidity: ContinuousClock.Instant, renewedAt: ContinuousClock.Instant
    ) async {
        var validUntil = initialValidity
        let renewInterval = Duration.seconds(grantedTTL) / 3
        var nextRenewal = renewedAt + renewInterval
        var backoff = RetryBackoff()
        let expired = "the lease could not be renewed before it could expire (etcd did not answer in time)"
        while true {
            do {
                try await Task.sleep(until: min(nextRenewal, validUntil), clock: .continuous)
            } catch {
                return
            }
            if ContinuousClock.now >= validUntil { return stepDown(expired) }
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
                return stepDown(expired)
            case .cancelled:
                return
            }
            // The watch on the key normally notices first; this read covers a watch that
            // broke without a word.
            let check = await boundedCall(until: validUntil) { [client, leaderKey] in try await client.get(key: leaderKey) }
            switch check {
            case .answered(let found) where !isOwnKey(found.keyValue, leadership):
                return stepDown(Self.keyLost)
            case .cancelled:
                return
            case .answered, .failed, .deadlinePassed:
                break
            }
        }
    }

    /// Watches the leader key from the term's start and steps down when it is deleted or put
    /// by someone else; returns then, or when cancelled. A broken watch is opened again from
    /// where it stopped.
    private func watchOwnKey(_ leadership: Leadership) async {
        var from = leadership.createRevision + 1
        var backoff = RetryBackoff()
        while !Task.isCancelled {
            do {
                for try await event in client.watch(key: leaderKey, startRevision: from) {
                    backoff.reset()
                    from = event.keyValue.modRevision + 1
                    if event.kind == .delete || !isOwnKey(event.keyValue, leadership) {
                        return stepDown(Self.keyLost)
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.debug("the leader's watch on its key broke; watching again", metadata: ["group": "\(group)", "error": "\(error)"])
            }
            await backoff.pause()
        }
    }

    /// The reason given when the leader key is no longer this term's.
    static let keyLost = "the leader key was deleted or taken over"

    /// Whether the leader key, as read, still belongs to the term: created by its campaign
    /// and attached to its lease.
    private func isOwnKey(_ keyValue: EtcdKeyValue?, _ leadership: Leadership) -> Bool {
        keyValue?.createRevision == leadership.createRevision && keyValue?.lease == leadership.leaseID
    }

    /// Ends the term: from here on ``isLeader(at:)`` is false and subscribers hear why.
    private func stepDown(_ reason: String) {
        let ended = state.withLock { $0.endTerm(reason: reason) }
        if ended { logger.warning("stepped down as leader", metadata: ["group": "\(group)", "reason": "\(reason)"]) }
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
