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
            lastHeard = .now
            if reportedStale {
                reportedStale = false
                if phase == .live { shared.setConnection(.live) }
            }
            // Two frames: the topic, then the publication (libzmq delivers both at once).
            guard topicFrame.hasMore, (try? subscriber.receive(into: bodyFrame, wait: false)) == true else { continue }
            guard !bodyFrame.hasMore else {
                while (try? subscriber.tryReceive())??.hasMore == true {}
                continue
            }
            if topicFrame.holds(runTopic) {
                handleRun(bodyFrame)
            } else if topicFrame.holds(Topic.heartbeat) {
                guard let publication = try? bodyFrame.withUnsafeBytes({ try Statebus_V1_Publication(serializedBytes: Array($0)) }) else { continue }
                handleHeartbeat(publication.heartbeat)
            } else if topicFrame.holds(joinTopic) {
                guard let publication = try? bodyFrame.withUnsafeBytes({ try Statebus_V1_Publication(serializedBytes: Array($0)) }),
                    phase == .awaitingJoin, publication.joinMarker.viewID == viewID
                else { continue }
                try? subscriber.unsubscribe(joinTopic)
                requestSnapshot()
            }
        }
    }

    private func handleRun(_ frame: ZeroMQ.Message) {
        guard phase == .live else {
            if !buffered.append(frame.withUnsafeBytes { Array($0) }) { restartJoin() }
            return
        }
        frame.withUnsafeBytes { _ = apply($0) }
    }

    // MARK: Applying

    /// Why applying a run stopped early.
    private enum Interruption {
        case newEpoch
        case gap(have: UInt64, next: UInt64)
        case malformed(String)
    }

    /// Applies one run's batches in order, under one lock and with one change notification,
    /// so observers see the publication whole and the cost is per message, not per batch.
    /// Each batch is read whole before it is applied (no half batch is ever shown). Batches
    /// already in the snapshot are skipped; at a new epoch or a sequence gap it stops (what
    /// came before stays applied) and starts resynchronising.
    /// - Returns: `false` when it started a resync (later publications must not be applied).
    func apply(_ publication: UnsafeRawBufferPointer) -> Bool {
        var run: UpdateRunReader
        do {
            run = try UpdateRunReader(publication: publication)
        } catch .unsupported(_) {
            // A valid form other than a host's: written again canonically, then read.
            guard let canonical = try? UpdateRunReader.canonical(publication) else {
                return interrupted(.malformed("a publication that is not a run"), publication: publication)
            }
            return canonical.withUnsafeBytes { apply($0) }
        } catch {
            return interrupted(.malformed("\(error)"), publication: publication)
        }
        guard run.object == schema?.objectIndex else { return true }
        var interruption: Interruption?
        var applied = 0
        var echoes: [(writeID: UInt64, sequence: UInt64)] = []
        var changed = Set<String>()
        if shared.feed.isObserved { tracker = tracker ?? ChangeTracker() } else { tracker = nil }
        let epoch = self.epoch
        let viewID = self.viewID
        shared.inner.withLock { inner in
            // Counted before the lock is released: whoever reads the new sequence (under the
            // lock) then reads a count that includes these batches.
            defer { if applied > 0 { shared.appliedUpdates.add(applied, ordering: .relaxed) } }
            guard run.epoch == epoch else {
                interruption = .newEpoch
                return
            }
            do {
                while let batch = try run.nextBatch() {
                    scratch.removeAll(keepingCapacity: true)
                    for _ in 0..<batch.changes { scratch.append(try run.nextChange()) }
                    switch BatchPlace(batch: batch.sequence, following: inner.state.sequence) {
                    case .alreadyApplied: continue
                    case .gap:
                        interruption = .gap(have: inner.state.sequence, next: batch.sequence)
                        return
                    case .next: break
                    }
                    let count = inner.state.confirmed.count
                    guard scratch.allSatisfy({ $0.property < count }) else {
                        interruption = .malformed("a change of property \(scratch.map(\.property).max() ?? 0); the object has \(count)")
                        return
                    }
                    if batch.origin == viewID, batch.writeID != 0 { echoes.append((batch.writeID, batch.sequence)) }
                    if inner.state.isPlain {
                        for change in scratch { _ = inner.state.applyPlain(change, sequence: batch.sequence, tracker: &tracker) }
                        inner.state.finishPlainBatch(sequence: batch.sequence)
                    } else {
                        _ = inner.state.applyBatch(
                            sequence: batch.sequence, changes: scratch, origin: batch.origin, writeID: batch.writeID, myViewID: viewID,
                            changed: &changed)
                    }
                    applied += 1
                }
            } catch {
                interruption = .malformed("\(error)")
            }
        }
        if let indexes = tracker?.indexes, !indexes.isEmpty, let names = schema?.layout.names {
            for index in indexes { changed.insert(names[index]) }
            tracker?.reset()
        }
        shared.feed.notify(changed)
        // The echo of this view's own write is the host's acceptance: it resolves the receipt,
        // whether or not an answer comes too (``ReplicaConfiguration/confirmsWritesByEcho``;
        // an answer after it finds nothing).
        if !echoes.isEmpty {
            for echo in echoes { shared.complete(writeID: echo.writeID, with: .success(echo.sequence)) }
            flushWrites()
            answerTaken()
        }
        guard let interruption else { return true }
        return interrupted(interruption, publication: publication)
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
        buffered.reset(keeping: publication)
        requestSnapshot()
    }

    /// The join buffer passed its bound (and is now empty): during the snapshot, ask for a
    /// new one, since what was dropped may be newer than it; while waiting for the join
    /// marker, the snapshot still to come covers what was dropped.
    private func restartJoin() {
        let restarts = shared.restartedJoins.add(1, ordering: .relaxed).newValue
        logger.warning(
            "more than \(buffered.maxBytes) bytes of updates arrived while joining (ReplicaLimits.maxJoinBufferBytes); dropped them and restarting the join (restart \(restarts))"
        )
        if phase == .snapshot { requestSnapshot() }
    }

    private func handleHeartbeat(_ heartbeat: Statebus_V1_Heartbeat) {
        if heartbeat.epoch != epoch {
            logger.info("heartbeat from a new host epoch; reconnecting")
            connect()
            return
        }
        guard phase == .live, let announced = heartbeat.sequences.first(where: { $0.object == object }) else { return }
        let current = shared.inner.withLock { $0.state.sequence }
        if announced.sequence > current {
            logger.info("missed updates up to \(announced.sequence) (have \(current)); resynchronising")
            shared.sequenceGaps.add(1, ordering: .relaxed)
            resync()
        }
    }

    // MARK: Snapshot

    func requestSnapshot() {
        var snapshot = Statebus_V1_SnapshotRequest()
        snapshot.object = object
        var request = Statebus_V1_Request()
        request.snapshot = snapshot
        incoming.reset()
        snapshotRequestID = send(request) ?? 0
        enter(.snapshot)
    }

    /// Takes one part of the snapshot under way, straight into the incoming arrays.
    func handlePart(_ buffer: UnsafeRawBufferPointer, range: Range<Int>, requestID: UInt64) {
        guard phase == .snapshot, requestID == snapshotRequestID, let schema else { return }
        var part: SnapshotPartReader
        do {
            part = try SnapshotPartReader(buffer, range: range)
        } catch {
            logger.warning("dropped a snapshot part that is not valid (\(error)); asking again")
            requestSnapshot()
            return
        }
        // The epoch first: a restarted host may number its objects differently.
        guard part.epoch == epoch else {
            // The host restarted since the welcome: a snapshot of the new run needs a new
            // join (hello, subscription, join marker), not another request.
            logger.info("a snapshot part of another host epoch (\(part.epoch), joined \(epoch)); joining again")
            connect()
            return
        }
        guard part.object == schema.objectIndex else { return }
        switch incoming.take(&part, propertyCount: schema.layout.count) {
        case .invalid(let reason):
            logger.warning("dropped a snapshot part that is not valid (\(reason)); asking again")
            requestSnapshot()
            return
        case .incomplete:
            // The snapshot is coming: its deadline (`checkLiveness`) counts from its latest
            // part, since a large one over a slow link takes longer than one request timeout,
            // and asking again would start it over every time.
            phaseStarted = .now
            return
        case .complete:
            break
        }
        applySnapshot(schema: schema)
    }

    /// Applies the complete snapshot, then what arrived meanwhile, and goes live.
    private func applySnapshot(schema: KnownSchema) {
        let snapshot = incoming
        incoming.reset()
        let epoch = self.epoch
        let confirmsByEcho = hostConfirmsByEcho
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
        defer { shared.progress.notify([.sequenceAdvanced]) }
        for publication in buffered.take() {
            guard publication.withUnsafeBytes({ apply($0) }) else { return }
        }
        flushWrites()
    }
}
