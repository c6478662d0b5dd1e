// Following: report the leader, watch its key from the revision after the lost campaign, and
// return to campaign when the key is deleted. The key is read again every TTL, because a
// watch on a paused or partitioned etcd can stay silent without breaking.

extension LeaderElection {
    /// What one round of watching the leader key saw.
    private enum WatchRound {
        /// The key was deleted: time to campaign.
        case deleted
        /// The key was put again (a new term, or the leader changed its record).
        case changed(EtcdKeyValue)
        /// Nothing within a TTL: read the key to be sure.
        case quiet
        /// The watch could not be opened or broke: read the key, after a pause.
        case broken
    }

    /// Follows `leader` until its key is gone, or the task is cancelled by ``resign()``.
    /// - Parameters:
    ///   - leader: the leader key as the lost campaign saw it.
    ///   - watchFrom: the revision after the one the campaign saw.
    func follow(_ leader: EtcdKeyValue, watchFrom: Int64) async {
        var from = watchFrom
        var backoff = RetryBackoff()
        report(leader)
        while !Task.isCancelled {
            let round = await watchRound(from: from)
            switch round {
            case .broken: await backoff.pause()
            case .deleted, .changed, .quiet: backoff.reset()
            }
            switch round {
            case .deleted:
                return
            case .changed(let updated):
                from = updated.modRevision + 1
                report(updated)
            case .quiet, .broken:
                if Task.isCancelled { return }
                let readBy = ContinuousClock.now + client.requestTimeout * client.endpoints.count
                switch await boundedCall(until: readBy, { [client, leaderKey] in try await client.get(key: leaderKey) }) {
                case .answered(let found):
                    guard let keyValue = found.keyValue else { return }
                    from = found.revision + 1
                    report(keyValue)
                case .failed, .deadlinePassed:
                    await backoff.pause()
                case .cancelled:
                    return
                }
            }
        }
    }

    /// Reports the leader to subscribers (only when it differs from the last report).
    private func report(_ leader: EtcdKeyValue) {
        state.withLock { $0.follow(leader: leader.value, revision: leader.createRevision) }
    }

    /// Watches the leader key from `revision` for at most one TTL.
    private func watchRound(from revision: Int64) async -> WatchRound {
        let events = client.watch(key: leaderKey, startRevision: revision)
        do {
            let seen = try await withDeadline(.seconds(leaseTTLSeconds)) { () -> WatchRound in
                for try await event in events {
                    switch event.kind {
                    case .delete: return .deleted
                    case .put: return .changed(event.keyValue)
                    }
                }
                return .broken
            }
            return seen ?? .quiet
        } catch {
            return .broken
        }
    }
}
