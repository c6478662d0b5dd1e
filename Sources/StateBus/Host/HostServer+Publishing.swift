import StateBusWire

// The updates channel: applied batches go out in the forms views subscribed to (version 2's
// packed runs on `u2/<object>`, version 1's batches on `u/<object>`), after the answers to the
// writes that made them; heartbeats; and the subscriptions the socket admits.

extension HostServer {
    /// Answers the writes handled since the last call and publishes every queued batch that
    /// needs no commit; holds the rest for the group commit (``CommitPipeline``), and answers
    /// and publishes the groups whose transaction has finished.
    ///
    /// A write's answer goes before its batch: the writer's confirmation then takes one hop,
    /// the time of a DEALER↔ROUTER round trip, while the batch follows at once to every view
    /// (the writer keeps its write pending until it has applied the batch's sequence).
    ///
    /// Publication follows the commit: a view never hears a persisted value in an update
    /// before the host's file holds it, so a view that restarts with the host sees nothing go
    /// backwards. The cost is one fsync of latency on an update that touches a persisted
    /// property; other objects' updates are not held up by it.
    func publishPending() {
        let replies = turn.takePending()
        var releases = [commitPipeline.take(replies: replies)]
        if releases[0].burst, turn.publicationSawBurst() {
            // The host's code applies changes faster than turns of the loop come: the next
            // publication gathers what comes in the meantime (then wakes nobody for each).
            thread.scheduleTimer(after: Self.burstInterval) { [unowned self] in
                self.turn.burstTimerFired()
                self.publishPending()
            }
        }
        releases += commitPipeline.advance()
        if let persistence { counters.persistenceCommits.store(persistence.writer.commitCount, ordering: .relaxed) }
        var compensated = false
        for release in releases {
            answer(release.replies, failure: release.failure)
            publish(release.batches, undurable: release.undurableBatches)
            for (waiter, durable) in release.waiters {
                guard let failure = release.failure, durable else {
                    waiter(nil)
                    continue
                }
                waiter(
                    StateBusError(
                        .persistenceFailed,
                        "the host could not make the change durable, so its persisted properties were set back to their stored values: \(failure)"))
            }
            if release.failure != nil { compensated = true }
        }
        // Given back only now, so that the queue is the source of truth's alone again.
        for index in releases.indices {
            var published: [AppliedBatch] = []
            swap(&published, &releases[index].batches)
            state.recycle(consume published)
        }
        // A failed commit queued compensating batches: they restore what the file holds, so
        // they go out at once.
        if compensated { publishPending() }
    }

    /// Publishes batches in sequence order, each object's consecutive batches together.
    private func publish(_ pending: [AppliedBatch], undurable: Set<CommitPipeline.BatchKey>) {
        var start = 0
        while start < pending.count {
            let object = pending[start].objectIndex
            var end = start + 1
            while end < pending.count, pending[end].objectIndex == object { end += 1 }
            let batches = pending[start..<end]
            if publishesVersion2[object] { publishRuns(batches, object: object, undurable: undurable) }
            if publishesVersion1[object] { publishBatches(batches, undurable: undurable) }
            publishedSequences[object] = batches.last!.sequence
            counters.publishedUpdates.add(batches.count, ordering: .relaxed)
            start = end
        }
    }

    /// Whether a batch's write failed its commit: it is published (its compensation follows)
    /// but not as accepted, so it travels without its origin and its view hears
    /// `persistenceFailed` instead of taking it for the echo of its write.
    private func isUndurable(_ batch: AppliedBatch, _ undurable: Set<CommitPipeline.BatchKey>) -> Bool {
        !undurable.isEmpty && undurable.contains(CommitPipeline.BatchKey(object: batch.object, sequence: batch.sequence))
    }

    /// Version 2: runs whose whole publication is at most ``HostLimits/maxPublicationBytes``
    /// (a single larger batch travels alone), each one message.
    private func publishRuns(_ batches: ArraySlice<AppliedBatch>, object: Int, undurable: Set<CommitPipeline.BatchKey>) {
        let limit = configuration.limits.maxPublicationBytes
        let topic = publicationTopics[object].runs
        // Worked on as a local value (its storage swapped out of the server and back): a
        // struct held by a class is copied, every array retained and released, at each read
        // of one of its computed properties, which here is once per batch.
        var encoder = UpdateRunEncoder()
        swap(&encoder, &runEncoder)
        defer { swap(&encoder, &runEncoder) }
        encoder.start(object: object, epoch: state.epoch, firstSequence: batches.first!.sequence)
        // By index, each field read where it is: `for batch in batches` copies every batch,
        // retaining and releasing its strings and values.
        for index in batches.indices {
            if encoder.batches > 0, encoder.encodedSize + batches[index].runSizeBound > limit {
                publish(encoder.publication(), topic: topic)
                encoder.start(object: object, epoch: state.epoch, firstSequence: batches[index].sequence)
            }
            let fromView = batches[index].origin != nil && !isUndurable(batches[index], undurable)
            encoder.beginBatch(origin: fromView ? batches[index].origin : nil, writeID: batches[index].writeID)
            Self.append(batches[index].changes.first, to: &encoder)
            for change in batches[index].changes.rest { Self.append(change, to: &encoder) }
        }
        publish(encoder.publication(), topic: topic)
    }

    /// Appends one change to a run: a whole value to its column, anything else as a pathed
    /// change.
    @inline(__always)
    private static func append(_ change: ObjectStore.Resolved, to encoder: inout UpdateRunEncoder) {
        if change.change.replacesWholeValue {
            encoder.append(property: change.property, value: change.newValue)
        } else {
            encoder.append(change.published)
        }
    }

    /// Version 1: several batches per publication (at most 512, and a whole publication of
    /// at most ``HostLimits/maxPublicationBytes`` but for a single larger batch).
    private func publishBatches(_ batches: ArraySlice<AppliedBatch>, undurable: Set<CommitPipeline.BatchKey>) {
        let first = batches.first!
        guard let definition = definitions[first.object] else { return }
        let topic = publicationTopics[first.objectIndex].batches
        var start = batches.startIndex
        while start < batches.endIndex {
            var end = start + 1
            // Split by bytes too (HostLimits.maxPublicationBytes): the subscriber queue's
            // bound in bytes assumes no publication is larger, except a single large batch.
            // The publication's protocol_version (2 bytes), then its batches.
            var bytes = 2 + batches[start].encodedSizeBound
            while end < batches.endIndex, end - start < 512 {
                bytes += batches[end].encodedSizeBound
                guard bytes <= configuration.limits.maxPublicationBytes else { break }
                end += 1
            }
            let published = batches[start..<end]
            start = end
            publish(topic: topic) {
                try AppliedBatch.version1Publication(published, epoch: state.epoch, definition: definition) { isUndurable($0, undurable) }
            }
        }
    }

    /// Sends write answers: accepted, or, for those that touched persisted properties when
    /// their commit failed, `persistenceFailed`. A copy gets its first copy's answer as it
    /// stands now.
    private func answer(_ replies: [PendingReply], failure: PersistenceError?) {
        for pending in replies {
            var verdict = pending.verdict
            if pending.isCopy {
                verdict = ledger.answer(view: pending.view, writeID: pending.writeID)?.verdict ?? verdict
            } else if let failure, pending.durable {
                verdict = .failure(
                    StateBusError(
                        .persistenceFailed,
                        "the host could not make the write durable, so its persisted properties were set back to their stored values: \(failure)",
                        object: pending.object, property: pending.persistedProperty))
                counters.writesAccepted.subtract(1, ordering: .relaxed)
                counters.writesRejected.add(1, ordering: .relaxed)
                if !pending.view.isEmpty { ledger.update(view: pending.view, writeID: pending.writeID, verdict: verdict) }
            }
            answer(write: pending.writeID, with: verdict, to: pending.requester)
        }
    }

    /// Encodes and sends one publication; one that cannot be encoded is counted as dropped.
    private func publish(topic: [UInt8], _ encode: () throws -> [UInt8]) {
        do {
            publish(try encode(), topic: topic)
        } catch {
            logger.error("could not encode a publication: \(error)")
            counters.droppedMessages.add(1, ordering: .relaxed)
        }
    }

    /// Sends one publication (topic frame, then the message).
    private func publish(_ bytes: [UInt8], topic: [UInt8]) {
        // Fault injection (tests): update publications lost on the wire (topics `u/` and
        // `u2/`); heartbeats and join markers still go, so a test knows which one was lost.
        if topic.first == UInt8(ascii: "u"), counters.publicationsToDrop.load(ordering: .relaxed) > 0 {
            counters.publicationsToDrop.subtract(1, ordering: .relaxed)
            return
        }
        do {
            if try updates.send(multipart: [topic, bytes], wait: false) {
                counters.publications.add(1, ordering: .relaxed)
                counters.publicationBytes.add(topic.count + bytes.count, ordering: .relaxed)
            } else {
                counters.droppedMessages.add(1, ordering: .relaxed)
            }
        } catch {
            counters.droppedMessages.add(1, ordering: .relaxed)
        }
    }

    // MARK: Subscriptions and heartbeats

    func subscriptionsReadable() {
        for _ in 0..<256 {
            guard let message = try? updates.tryReceive() else { return }
            // Manual mode: each admission applies to the connection the message came from,
            // so it happens before the next receive.
            switch subscriptionGate.decide(message.bytes) {
            case .admit(let topic, let served):
                try? updates.subscribe(topic)
                if case .updates(let object, let version) = served {
                    if version == StateBusProtocol.version1 { publishesVersion1[object] = true } else { publishesVersion2[object] = true }
                }
            case .join(let topic, let viewID):
                // The marker tells the view its subscriptions are live (they were sent
                // before this one, on the same connection); the join topic is dropped at
                // once, so a peer cannot accumulate them.
                try? updates.subscribe(topic)
                publish(topic: topic) { try HostSignal.joinMarkerPublication(viewID: viewID, epoch: state.epoch) }
                try? updates.unsubscribe(topic)
            case .unsubscribe(let topic):
                try? updates.unsubscribe(topic)
            case .refuse(let reason):
                if counters.refusedSubscriptions.add(1, ordering: .relaxed).oldValue % 10_000 == 0 {
                    logger.warning(
                        "refused a subscription on the updates socket: \(reason) (refused so far: \(counters.refusedSubscriptions.load(ordering: .relaxed)); see HostStatistics.refusedSubscriptions)"
                    )
                }
            case .ignore:
                break
            }
        }
    }

    func heartbeat() {
        counters.connectedViews.record(clients.connectedCount())
        counters.clientBacklogBytes.record(clients.totalBacklogBytes)
        // Publish anything queued first, so a heartbeat never announces a sequence whose
        // batch has not gone out yet.
        publishPending()
        // Sent every interval, busy or not: a view hears only its own object's updates and
        // the heartbeat, so updates of other objects (or join markers) must not stand in for
        // it: otherwise a flood of joins, or one busy object, leaves the views of idle objects
        // hearing nothing, and they go stale. The same message serves both versions.
        // The sequences published, not the stores' own: the host's code may apply a batch
        // on another thread between the publish above and this line, and a heartbeat naming
        // a sequence not yet published sends every view into a resync.
        publish(topic: Topic.heartbeat) {
            try HostSignal.heartbeatPublication(
                epoch: state.epoch, sequences: zip(state.names, publishedSequences).lazy.map { (object: $0, sequence: $1) })
        }
    }
}
