import StateBusWire
import ZeroMQ

// The updates channel and the snapshot: join markers, heartbeats, runs of updates applied
// straight from their columns into the state's arrays, the join buffer, gaps and resyncs.

extension ReplicaClient {
    // MARK: Receiving

    func updatesReadable() {
        guard let subscriber else { return }
        let appliedBefore = shared.appliedUpdates.load(ordering: .relaxed)
        defer {
            if shared.appliedUpdates.load(ordering: .relaxed) != appliedBefore { shared.progress.notify([.sequenceAdvanced]) }
        }
        for _ in 0..<512 {
            // A handler may have replaced the socket: what is left on this one is moot.
            guard self.subscriber === subscriber, (try? subscriber.receive(into: topicFrame, wait: false)) == true else { return }
            if updatesSilence.heard(at: .now), phase == .live { shared.setConnection(.live) }
            // Two frames: the topic, then the publication (libzmq delivers both at once).
            guard topicFrame.hasMore, (try? subscriber.receive(into: bodyFrame, wait: false)) == true else { continue }
            guard !bodyFrame.hasMore else {
                while (try? subscriber.tryReceive())??.hasMore == true {}
                continue
            }
            if topicFrame.holds(runTopic) {
                handleRun(bodyFrame)
            } else if topicFrame.holds(Topic.heartbeat) {
                guard case .heartbeat(let epoch, let sequences)? = bodyFrame.withUnsafeBytes({ HostSignal(publication: $0) }) else { continue }
                handleHeartbeat(epoch: epoch, sequences: sequences)
            } else if topicFrame.holds(joinTopic) {
                guard case .joinMarker(let markerViewID, _)? = bodyFrame.withUnsafeBytes({ HostSignal(publication: $0) }),
                    phase == .awaitingJoin, markerViewID == viewID
                else { continue }
                try? subscriber.unsubscribe(joinTopic)
                requestSnapshot()
            }
        }
    }

    private func handleRun(_ frame: ZeroMQ.Message) {
        frame.withUnsafeBytes { _ = take($0) }
    }

    // MARK: Applying

    /// Takes one publication of the object's runs: applied when the replica is synced, held
    /// while its snapshot is due (``ObjectFollower``).
    /// - Returns: `false` when it started a new join or resync (later publications must not
    ///   be applied).
    func take(_ publication: UnsafeRawBufferPointer) -> Bool {
        var run: UpdateRunReader
        do {
            run = try UpdateRunReader(publication: publication)
        } catch .unsupported(_) {
            // A valid form other than a host's: written again canonically, then read.
            guard let canonical = try? UpdateRunReader.canonical(publication) else {
                return interrupted(.malformed("a publication that is not a run"), publication: publication)
            }
            return canonical.withUnsafeBytes { take($0) }
        } catch {
            return interrupted(.malformed("\(error)"), publication: publication)
        }
        guard run.object == terms.schema?.objectIndex else { return true }
        switch follower.admit(epoch: run.epoch, size: publication.count, holding: { Array(publication) }) {
        case .apply: return apply(&run, publication: publication)
        case .held: return true
        case .overflowed:
            restartJoin()
            return false
        case .otherEpoch: return interrupted(.newEpoch, publication: publication)
        }
    }

    /// Applies one run's batches in order, under one lock and with one change notification,
    /// so observers see the publication whole and the cost is per message, not per batch
    /// (the batch rule is ``ObjectFollower/apply(_:to:context:)``'s).
    /// - Returns: `false` when it started a resync.
    private func apply(_ run: inout UpdateRunReader, publication: UnsafeRawBufferPointer) -> Bool {
        if shared.feed.isObserved { tracker = tracker ?? ChangeTracker() } else { tracker = nil }
        var context = ReplicaState.Context(viewID: viewID, tracker: tracker)
        tracker = nil
        let outcome = shared.inner.withLock { inner in
            let outcome = follower.apply(&run, to: &inner.state, context: &context)
            // Counted before the lock is released: whoever reads the new sequence (under the
            // lock) then reads a count that includes these batches.
            if outcome.applied > 0 { shared.appliedUpdates.add(outcome.applied, ordering: .relaxed) }
            return outcome
        }
        tracker = context.tracker
        var changed = context.changed
        if let indexes = tracker?.indexes, !indexes.isEmpty, let names = terms.schema?.layout.names {
            for index in indexes { changed.insert(names[index]) }
            tracker?.reset()
        }
        shared.feed.notify(changed)
        // The echo of this view's own write is the host's acceptance: it resolves the receipt,
        // whether or not an answer comes too (``ReplicaConfiguration/confirmsWritesByEcho``;
        // an answer after it finds nothing).
        if !context.echoes.isEmpty {
            for echo in context.echoes { shared.complete(writeID: echo.writeID, with: .success(echo.sequence)) }
            flushWrites()
            answerTaken()
        }
        switch outcome.stop {
        case nil: return true
        case .gap(let have, let next)?: return interrupted(.gap(have: have, next: next), publication: publication)
        case .malformed(let reason)?: return interrupted(.malformed(reason), publication: publication)
        }
    }

    /// Why taking a run stopped early.
    private enum Interruption {
        case newEpoch
        case gap(have: UInt64, next: UInt64)
        case malformed(String)
    }

    /// Starts what an interruption calls for: a new join, or a resync keeping the publication
    /// that revealed a gap (its newer batches apply after the snapshot).
    private func interrupted(_ interruption: Interruption, publication: UnsafeRawBufferPointer) -> Bool {
        switch interruption {
        case .newEpoch:
            logger.info("updates from a new host epoch; reconnecting")
            connect()
        case .gap(let have, let next):
            logger.info("sequence gap (have \(have), got \(next)); resynchronising")
            shared.sequenceGaps.add(1, ordering: .relaxed)
            resync(keeping: Array(publication))
        case .malformed(let reason):
            logger.warning("dropped a publication that is not a valid run (\(reason)); resynchronising")
            resync()
        }
        return false
    }

    func resync(keeping publication: [UInt8]? = nil) {
        follower.lose(keeping: publication, size: publication?.count ?? 0)
        requestSnapshot()
    }

    /// The runs held while joining passed their bound (and were dropped): during the
    /// snapshot, ask for a new one, since what was dropped may be newer than it; while
    /// waiting for the join marker, the snapshot still to come covers what was dropped.
    private func restartJoin() {
        let restarts = shared.restartedJoins.add(1, ordering: .relaxed).newValue
        logger.warning(
            "more than \(follower.maxHeldBytes) bytes of updates arrived while joining (ReplicaLimits.maxJoinBufferBytes); dropped them and restarting the join (restart \(restarts))"
        )
        if phase == .snapshot { requestSnapshot() }
    }

    private func handleHeartbeat(epoch: UInt64, sequences: [String: UInt64]) {
        if epoch != follower.epoch {
            logger.info("heartbeat from a new host epoch; reconnecting")
            connect()
            return
        }
        guard phase == .live, let announced = sequences[object] else { return }
        let current = shared.inner.withLock { $0.state.sequence }
        if follower.lostUpdates(announced: announced, have: current) {
            logger.info("missed updates up to \(announced) (have \(current)); resynchronising")
            shared.sequenceGaps.add(1, ordering: .relaxed)
            resync()
        }
    }

    // MARK: Snapshot

    func requestSnapshot() {
        sendSnapshotRequest()
        enter(.snapshot)
    }

    /// Asks for the snapshot; parts of an earlier request are not taken any more.
    func sendSnapshotRequest() {
        follower.awaitSnapshot(requestID: send(.snapshot(object: object)) ?? 0)
    }

    /// Takes one part of the snapshot under way, straight into the incoming arrays.
    func handlePart(_ buffer: UnsafeRawBufferPointer, range: Range<Int>, requestID: UInt64) {
        guard phase == .snapshot, requestID == follower.snapshotRequestID, let schema = terms.schema else { return }
        var part: SnapshotPartReader
        do {
            part = try SnapshotPartReader(buffer, range: range)
        } catch {
            logger.warning("dropped a snapshot part that is not valid (\(error)); asking again")
            requestSnapshot()
            return
        }
        guard part.epoch != follower.epoch || part.object == schema.objectIndex else { return }
        switch follower.take(&part, requestID: requestID, propertyCount: schema.layout.count) {
        case .notAwaited:
            return
        case .otherEpoch:
            // The host restarted since the welcome: a snapshot of the new run needs a new
            // join (hello, subscription, join marker), not another request.
            logger.info("a snapshot part of another host epoch (\(part.epoch), joined \(follower.epoch)); joining again")
            connect()
        case .invalid(let reason):
            logger.warning("dropped a snapshot part that is not valid (\(reason)); asking again")
            requestSnapshot()
        case .incomplete:
            // The snapshot is coming: its deadline (`checkLiveness`) counts from its latest
            // part, since a large one over a slow link takes longer than one request timeout,
            // and asking again would start it over every time.
            phaseClock.restart()
        case .complete(let held):
            // Installed by a call of its own, so that the snapshot's values are the state's
            // alone when the runs that arrived meanwhile change them (in place, then).
            applySnapshot(follower.takeSnapshot(), schema: schema)
            defer { shared.progress.notify([.sequenceAdvanced]) }
            for publication in held {
                guard publication.withUnsafeBytes({ take($0) }) else { return }
            }
            flushWrites()
        }
    }

    /// Applies the complete snapshot and goes live; the caller then applies what arrived
    /// meanwhile.
    private func applySnapshot(_ snapshot: IncomingSnapshot, schema: HostTerms.KnownSchema) {
        let epoch = follower.epoch
        let confirmsByEcho = terms.confirmsByEcho
        let changes = shared.inner.withLock { inner in
            let changes = inner.state.applySnapshot(
                epoch: epoch, sequence: snapshot.sequence, layout: schema.layout, values: snapshot.values, versions: snapshot.versions)
            // Confirmed by echo, a write whose publication was lost (the gap this snapshot
            // repairs) gets no answer: every write still unanswered goes again, and the host
            // answers a copy of one it applied from its ledger instead of applying it twice.
            // Marked before anything is sent, so the copies go ahead of every newer write
            // (the ledger keeps a view's last 1,024 answers, more than the window holds).
            if confirmsByEcho { inner.state.markAllUnsent() }
            return changes
        }
        switch changes {
        case .all:
            // Every name, built only for someone who observes names.
            if shared.feed.isObserved { shared.feed.notify(Set(schema.layout.names)) }
        case .some(let names):
            shared.feed.notify(names)
        }
        shared.appliedSnapshots.add(1, ordering: .relaxed)
        enter(.live)
    }
}
