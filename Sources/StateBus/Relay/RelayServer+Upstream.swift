import Foundation
import StateBusRuntime
import StateBusWire
import SwiftProtobuf
import ZeroMQ

/// The relay as a view of its upstream: join, keep the copies, relay publications, forward
/// writes and pass their answers back.
extension RelayServer {
    // MARK: Connection

    /// Opens the upstream control socket and says hello.
    func connectUpstream() {
        upstreamPhase.enter(.hello)
        do throws(RuntimeFolderError) {
            try RuntimeFolder.checkEndpoint(upstreamEndpoint)
        } catch {
            logger.error("not connecting to \(upstreamEndpoint): \(error)")
            return
        }
        do {
            let dealer = try Socket(context: thread.context, type: .dealer)
            try secureUpstream(dealer)
            try dealer.set(.reconnectInterval, 100)
            try dealer.set(.reconnectIntervalMax, 1000)
            // Room for every forwarded write and the few other requests.
            try dealer.set(.sendHighWaterMark, Int32(clamping: configuration.maxForwardedWrites + 1_000))
            try dealer.set(.maxMessageSize, Int64(configuration.maxIncomingMessageBytes))
            if upstreamEndpoints.hasAlternatives {
                // A standby that takes the lead binds its endpoint anew: a hello it read as a
                // standby is lost with its socket, and is said again when the connection
                // comes back instead of after the request timeout (which would leave the new
                // leader for silence).
                do {
                    try upstreamSockets.watchHandshakes(of: dealer, on: thread) { [unowned self] in self.upstreamHandshakesReadable() }
                } catch {
                    logger.debug("no handshake monitor on the upstream control socket: \(error)")
                }
            }
            try dealer.connect(upstreamEndpoint)
            thread.register(dealer) { [unowned self] in self.upstreamControlReadable() }
            upstreamSockets.control = dealer
        } catch {
            logger.error("cannot connect to \(upstreamEndpoint): \(error)")
            // The monitor, when there is one, was registered before the connect failed.
            upstreamSockets.close(on: thread)
            return
        }
        sayHello()
    }

    /// The upstream control connection's handshakes: when the connection came back after a
    /// drop, a hello still unanswered is sent again (its phase's clock runs on, so a host that
    /// keeps dropping the connection is still left for silence in time).
    private func upstreamHandshakesReadable() {
        if upstreamSockets.takeHandshakeEvents().connectionCameBack, phase == .hello { sendHello() }
    }

    /// Makes a socket a CURVE client of the upstream, when the relay has keys for it.
    private func secureUpstream(_ socket: Socket) throws {
        guard let security = configuration.upstreamSecurity else { return }
        try socket.makeCurveClient(keys: security.keys, serverKey: security.hostPublicKey)
    }

    private func sayHello() {
        sendHello()
        upstreamPhase.restart()
    }

    /// Sends a hello; the welcome answers the latest one. A retry waiting after a standby's
    /// refusal is moot once a hello is out (as for a view: ``ReplicaClient``'s `sendHello`);
    /// one that could not be sent leaves the retry.
    private func sendHello() {
        let hello = FollowerRequest.Hello(
            viewID: configuration.relayID, nodeName: configuration.name, objects: configuration.objects,
            sessionToken: upstreamWelcome?.sessionToken ?? Data(), schemaHash: upstreamWelcome?.schemaHash ?? 0, relay: true)
        upstreamRequests.helloID = sendUpstream(.hello(hello)) ?? 0
        if upstreamRequests.helloID != 0 { upstreamEndpoints.cancelHelloRetry() }
    }

    /// Closes both upstream sockets.
    func closeUpstream() {
        upstreamSockets.close(on: thread)
        upstreamRequests.newConnection()
    }

    /// Joins the upstream again from the start (a new epoch, silence, an unbound connection).
    /// Every view is unbound and every write in flight answered `notJoined`, so views say
    /// hello again (their hellos wait until the relay has caught up) and send their
    /// unanswered writes again in order: no write overtakes one sent before it.
    func rejoinUpstream(because reason: String, silent: Bool = false) {
        logger.info("joining \(upstreamEndpoint) again: \(reason)")
        // With other hosts of a group to try, a silent one is left: it may be the leader
        // that died.
        if silent { upstreamEndpoints.leaveSilent(at: .now, suspectingFor: configuration.upstreamRequestTimeout * 2) }
        if joinsLogged == .current { joinsLogged = .earlier }
        counters.countUpstreamReconnect()
        closeUpstream()
        for (_, write) in forwarded {
            if let callID = write.callID {
                answerCall(
                    callID,
                    error: StateBusError(
                        .interrupted,
                        "the relay joined its upstream again (\(reason)) before the call was answered: the action may or may not have run; read the state before calling again"
                    ), to: write.requester)
                continue
            }
            answerWrite(
                write.writeID,
                refusal: StateBusError(
                    .notJoined,
                    "the relay joined its upstream again (\(reason)) before the write was answered; say hello again and send it again (a copy already applied is answered, not applied twice)"
                ), to: write.requester)
        }
        forwarded = [:]
        clients.unbindAll()
        welcomes.views = nil
        for name in relayed.copies.keys { relayed.copies[name]?.invalidate() }
        counters.setSynced(false)
        connectUpstream()
    }

    /// Sends a request upstream. - Returns: its request id, or `nil` when the socket would not
    /// take it now.
    @discardableResult
    func sendUpstream(_ request: FollowerRequest) -> UInt64? {
        guard let dealer, let (bytes, id) = upstreamRequests.encode(request) else { return nil }
        upstreamRequests.sent(at: .now)
        guard (try? dealer.send(bytes, wait: false)) == true else { return nil }
        return id
    }

    // MARK: Control replies from upstream

    private func upstreamControlReadable() {
        guard let dealer else { return }
        for _ in 0..<256 {
            guard self.dealer === dealer, let message = try? dealer.tryReceive() else { return }
            // Not `lastHeard`: that is the updates connection's, which answers here do not
            // prove alive (libzmq may have dropped it for good while answers still come).
            upstreamRequests.answered(at: .now)
            guard !message.hasMore else { continue }
            let handled = message.withUnsafeBytes { buffer -> Bool in
                guard let envelope = ReplyEnvelope(buffer), envelope.body == ReplyEnvelope.snapshotPart else { return false }
                handlePart(buffer, range: envelope.bodyRange, requestID: envelope.requestID)
                return true
            }
            if handled { continue }
            guard let reply = try? FollowerReply(bytes: message.bytes) else {
                logger.warning("dropped a reply from upstream that is not a StateBus message")
                continue
            }
            switch reply.body {
            case .welcome(let welcome):
                guard phase == .hello, reply.requestID == upstreamRequests.helloID else { continue }
                handleWelcome(welcome.wire)
            case .snapshotPart(let canonical):
                // A form other than a host's: written again canonically, then read.
                canonical.withUnsafeBytes { buffer in
                    if let envelope = ReplyEnvelope(buffer) { handlePart(buffer, range: envelope.bodyRange, requestID: envelope.requestID) }
                }
            case .write(_, let verdict):
                passBack(reply, refusal: verdict.refusal, of: "a write", rejoiningOn: [.notJoined, .viewIDInUse, .notLeader])
            case .call(_, let outcome):
                passBack(reply, refusal: outcome.refusal, of: "a call", rejoiningOn: [.notJoined, .viewIDInUse])
            case .error(let error, let leader):
                if reply.requestID == upstreamRequests.helloID, error.code == .notLeader {
                    followUpstreamLeader(named: leader)
                } else if reply.requestID == upstreamRequests.helloID {
                    logger.error("the upstream at \(upstreamEndpoint) refused the relay's hello: \(error)")
                } else {
                    logger.warning("upstream error: \(error)")
                }
            case .views, .other:
                break
            }
        }
    }

    private func handleWelcome(_ answer: Statebus_V1_Welcome) {
        var welcome = answer
        if welcome.objects.isEmpty, let known = upstreamWelcome, known.schemaHash == welcome.schemaHash {
            welcome.objects = known.objects  // the schema the relay holds is current
        } else if welcome.objects.isEmpty, !upstreamWelcomeObjectsCleared(welcome) {
            // A schema hash the relay does not hold: ask with none.
            welcomes.upstream = nil
            sayHello()
            return
        }
        let served = configuration.objects.isEmpty ? welcome.objects.map(\.name) : configuration.objects
        let offered = Set(welcome.objects.map(\.name))
        let missing = served.filter { !offered.contains($0) }
        if !missing.isEmpty {
            logger.error(
                "the upstream at \(upstreamEndpoint) serves no object \(missing.joined(separator: ", ")); it serves \(offered.sorted().joined(separator: ", "))"
            )
        }
        let relayedNames = served.filter { offered.contains($0) }
        upstreamEndpoints.welcomed()
        welcomes.upstream = welcome
        gate = SubscriptionGate(objects: relayedNames, maxSubscriptionBytes: configuration.limits.maxSubscriptionBytes)
        // Views stay subscribed to the relay across its re-join upstream, so an object keeps
        // its version-1 form while it is still relayed (sticky, as on a host).
        publishesVersion1.formIntersection(relayedNames)
        relayed.replace(
            with: welcome.objects.enumerated().filter { relayedNames.contains($0.element.name) }.map { index, schema in
                ObjectCopy(
                    name: schema.name, index: index, layout: PropertyLayout(table: schema.propertyTable), epoch: welcome.epoch,
                    maxBufferedBytes: configuration.maxBufferedUpdateBytes)
            })
        let endpoint = UpdatesEndpoint.reachable(welcome.updatesEndpoint, controlEndpoint: upstreamEndpoint)
        do {
            let subscriber = try Socket(context: thread.context, type: .sub)
            try secureUpstream(subscriber)
            try subscriber.set(.receiveHighWaterMark, 100_000)
            try subscriber.set(.maxMessageSize, Int64(configuration.maxIncomingMessageBytes))
            for name in relayedNames { try subscriber.subscribe(Topic.runs(name)) }
            try subscriber.subscribe(Topic.heartbeat)
            try subscriber.subscribe(Topic.join(configuration.relayID))
            try subscriber.connect(endpoint)
            thread.register(subscriber) { [unowned self] in self.upstreamUpdatesReadable() }
            upstreamSockets.updates = subscriber
        } catch {
            logger.error("cannot subscribe to \(endpoint): \(error)")
            return
        }
        welcomes.views = makeWelcomes(from: welcome, relayed: relayedNames)
        upstreamPhase.enter(.joining)
        lastHeard = .now
    }

    /// Whether a welcome without objects is an upstream that serves none (rather than one
    /// that left out a schema the relay holds).
    private func upstreamWelcomeObjectsCleared(_ welcome: Statebus_V1_Welcome) -> Bool {
        welcome.schemaHash == 0 || welcome.schemaHash == (try? HostWelcome.hash(of: []))
    }

    func requestSnapshot(of object: String) {
        guard let id = sendUpstream(.snapshot(object: object)) else {
            relayed.copies[object]?.invalidate()
            return
        }
        relayed.copies[object]?.awaitSnapshot(requestID: id, at: .now)
        counters.upstreamSnapshots.add(1, ordering: .relaxed)
        counters.setSynced(false)
    }

    private func handlePart(_ buffer: UnsafeRawBufferPointer, range: Range<Int>, requestID: UInt64) {
        guard phase == .live, requestID != 0, var part = try? SnapshotPartReader(buffer, range: range),
            let name = relayed.names[part.object], relayed.copies[name]?.snapshotRequestID == requestID
        else { return }
        switch relayed.copies[name]!.receive(&part, requestID: requestID) {
        case (_, .otherEpoch):
            rejoinUpstream(because: "a snapshot part of another upstream epoch")
        case (_, .needsSnapshot):
            requestSnapshot(of: name)
        case (false, .taken):
            // A part arrived: the snapshot is coming, so its deadline counts from now (a large
            // one over a slow link takes longer than one request timeout, and asking again
            // would start it over every time).
            relayed.copies[name]!.partArrived(at: .now)
        case (true, .taken):
            noteSynced()
        }
    }

    /// Marks the relay synced when every copy is, and answers what waited for it.
    private func noteSynced() {
        let synced = relayed.allSynced
        counters.setSynced(synced && phase == .live)
        if synced, joinsLogged != .current {
            logger.info(
                "relaying \(relayed.copies.keys.sorted().joined(separator: ", ")) of \(upstreamEndpoint)\(joinsLogged == .earlier ? " again" : "")")
            joinsLogged = .current
        }
        retryParked()
    }

    /// Passes an upstream answer to a view's write or call on to the view, as it came.
    /// - Parameters:
    ///   - refusal: the answer's error, when it refuses.
    ///   - what: "a write" or "a call", for the log.
    ///   - codes: the refusals that make the relay join again: the upstream does not hold
    ///     the relay's connection (it restarted, or ZeroMQ reconnected the socket
    ///     underneath), or no longer leads its group; nothing was applied, nothing ran.
    func passBack(_ answer: FollowerReply, refusal: StateBusError?, of what: String, rejoiningOn codes: Set<StateBusError.Code>) {
        guard let forwarded = forwarded.removeValue(forKey: answer.requestID) else { return }
        if forwarded.callID == nil { counters.answeredWrites.add(1, ordering: .relaxed) }
        if let bytes = try? answer.passedOn(version: forwarded.requester.version, requestID: forwarded.requester.requestID) {
            send(bytes, to: forwarded.requester.identity)
        } else {
            logger.error("could not encode an upstream answer again for view \(forwarded.viewID); it is lost and the view's request times out")
            counters.droppedMessages.add(1, ordering: .relaxed)
        }
        if let refusal, codes.contains(refusal.code) {
            rejoinUpstream(because: "the upstream answered \(what) with \(refusal.code)")
        }
    }

    /// How long the updates connection may be silent before the relay joins again: the
    /// missed heartbeats of a view, or four times that while the control connection answers.
    /// A dropped updates connection stays dropped, so waiting longer still heals it, while an
    /// upstream starved of CPU for a few seconds (its heartbeats late, its answers too, but
    /// some got through) does not cost every view of the relay a new join.
    private func updatesSilenceLimit(interval: Duration, now: ContinuousClock.Instant) -> Duration {
        let limit = interval * configuration.missedHeartbeatsBeforeStale
        return now - upstreamRequests.lastAnswered < limit ? limit * 4 : limit
    }

    // MARK: Publications from upstream

    private func upstreamUpdatesReadable() {
        guard let subscriber else { return }
        let joinTopic = Topic.join(configuration.relayID)
        var changed = false
        for _ in 0..<256 {
            guard self.subscriber === subscriber, let frames = try? subscriber.tryReceiveMultipart() else { break }
            lastHeard = .now
            guard frames.count == 2 else { continue }
            let topic = frames[0].bytes
            if topic == joinTopic {
                if phase == .joining, case .joinMarker(_, let markerEpoch)? = frames[1].withUnsafeBytes({ HostSignal(publication: $0) }),
                    markerEpoch == epoch
                {
                    upstreamPhase.enter(.live)
                    for name in relayed.copies.keys.sorted() { requestSnapshot(of: name) }
                }
                continue
            }
            let body = frames[1].bytes
            // Unchanged, before anything else: views apply it as they would from the host.
            relay(topic: frames[0], body: frames[1])
            if topic == Topic.heartbeat {
                // From `body`: the relaying above sent the frame itself, which empties it.
                guard case .heartbeat(let heartbeatEpoch, let sequences)? = body.withUnsafeBytes({ HostSignal(publication: $0) }) else {
                    continue
                }
                guard heartbeatEpoch == epoch else {
                    if phase != .hello { rejoinUpstream(because: "the upstream's epoch changed") }
                    return
                }
                guard phase == .live else { continue }
                for (object, sequence) in sequences.sorted(by: { $0.key < $1.key }) {
                    guard let copy = relayed.copies[object], copy.lostUpdates(announced: sequence) else { continue }
                    requestSnapshot(of: object)
                    changed = true
                }
                continue
            }
            guard let run = try? body.withUnsafeBytes({ try DecodedRun(publication: $0) }) else {
                logger.warning("dropped a publication from upstream that is not a valid run")
                continue
            }
            guard run.epoch == epoch else {
                if phase != .hello { rejoinUpstream(because: "the upstream's epoch changed") }
                return
            }
            guard phase == .live, let name = relayed.names[run.object], relayed.copies[name] != nil else { continue }
            if publishesVersion1.contains(name) { publishVersion1(run, of: relayed.copies[name]!) }
            // Applied where the copy is: a second holder of its values would make an element
            // change copy a whole collection.
            switch relayed.copies[name]!.apply(run, bytes: body.count) {
            case .taken: break
            case .needsSnapshot:
                requestSnapshot(of: name)
                changed = true
            case .otherEpoch:
                rejoinUpstream(because: "the upstream's epoch changed")
                return
            }
        }
        if changed { counters.setSynced(relayed.allSynced) }
    }

    /// Sends a publication on to the relay's views, as it came.
    private func relay(topic: ZeroMQ.Message, body: ZeroMQ.Message) {
        guard (try? updates.send(topic, more: true, wait: false)) == true else {
            counters.droppedMessages.add(1, ordering: .relaxed)  // views see a gap and resync
            return
        }
        // libzmq takes the rest of a message whose first frame it took.
        if (try? updates.send(body, wait: false)) == true {
            counters.relayedPublications.add(1, ordering: .relaxed)
        } else {
            counters.droppedMessages.add(1, ordering: .relaxed)
            logger.error("libzmq refused the body of a publication whose topic it took; views will see a gap and resync")
        }
    }

    /// Writes a run's batches in version 1's form for the relay's version-1 views, as a host
    /// does: at most 512 batches and ``HostLimits/maxPublicationBytes`` (the whole
    /// publication) in one, but for a single larger batch, which travels alone.
    ///
    /// A batch named by its properties' names can take more bytes than in the run it came
    /// in, so a run within the bound may need several publications.
    private func publishVersion1(_ run: DecodedRun, of copy: ObjectCopy) {
        // Each batch is encoded once, and a publication is written from them by hand: its
        // protocol_version, then each batch as an element of `updates` (field 10), which is
        // what the generated code writes for the same message.
        guard let encoded = try? run.version1Batches(object: copy.name, names: copy.layout.names) else { return }
        let limit = configuration.limits.maxPublicationBytes
        var start = 0
        while start < encoded.count {
            var publication = WireWriter()
            publication.field(1, varint: UInt64(StateBusProtocol.version1))
            var end = start
            while end < encoded.count, end - start < 512 {
                let added = 1 + WireWriter.varintSize(UInt64(encoded[end].count)) + encoded[end].count
                guard end == start || publication.count + added <= limit else { break }
                publication.tag(10, .lengthDelimited)
                publication.varint(UInt64(encoded[end].count))
                publication.append(contentsOf: encoded[end])
                end += 1
            }
            start = end
            if (try? updates.send(multipart: [Topic.updates(copy.name), publication.bytes], wait: false)) != true {
                counters.droppedMessages.add(1, ordering: .relaxed)
            }
        }
    }

    // MARK: Liveness

    /// Every 100 ms: asks again for what went unanswered, notices a silent upstream, keeps
    /// the relay's view id leased with a ping, and expires what waited too long.
    func tick() {
        let now = ContinuousClock.now
        let timeout = configuration.upstreamRequestTimeout
        if let waited = upstreamRequests.unanswered(at: now), waited > timeout * 3 {
            // Asking again on this connection cannot help when libzmq dropped it for good, as
            // it does after a message larger than the relay reads (it reconnects only after a
            // network failure).
            upstreamControlReadable()
            if let waited = upstreamRequests.unanswered(at: now), waited > timeout * 3 {
                if let problem = UnreachableIPCSocket.problem(of: upstreamEndpoint) {
                    logger.warning(
                        "nothing listens at \(upstreamEndpoint) (\(problem)), and nothing answered for \(waited); still trying. Start the host or relay there, or give the control endpoint it prints when it starts"
                    )
                } else {
                    logger.warning(
                        "\(upstreamEndpoint) answered nothing for \(waited) (3 x upstreamRequestTimeout); if it is running, its answer may be larger than the relay reads (RelayConfiguration.maxIncomingMessageBytes, \(configuration.maxIncomingMessageBytes) bytes)"
                    )
                }
                rejoinUpstream(because: "no answer on the control connection", silent: true)
                return
            }
        }
        switch phase {
        case .hello:
            if upstreamEndpoints.takeHelloRetry(at: now) {
                closeUpstream()
                connectUpstream()
            } else if dealer == nil {
                connectUpstream()
            } else if upstreamPhase.elapsed(at: now) > timeout, upstreamEndpoints.hasAlternatives {
                logger.warning("no welcome from \(upstreamEndpoint) within \(timeout); trying the next host of its group")
                upstreamEndpoints.leaveSilent(at: now, suspectingFor: timeout * 2)
                closeUpstream()
                connectUpstream()
            } else if upstreamPhase.elapsed(at: now) > timeout {
                logger.warning(
                    "no welcome from \(upstreamEndpoint) within \(timeout): is it running? With keys: does it list this relay's key with the role relay, and is the upstream key given its public key? Asking again"
                )
                sayHello()
            }
        case .joining:
            if upstreamPhase.elapsed(at: now) > timeout { rejoinUpstream(because: "no join marker within \(timeout)") }
        case .live:
            if let interval = upstreamWelcome.map({ Duration.milliseconds(Int($0.heartbeatIntervalMs)) }), interval > .zero,
                now - lastHeard > updatesSilenceLimit(interval: interval, now: now)
            {
                // Silence is the upstream's only when nothing waits to be read: after this
                // process was starved of CPU, this timer can run before what did arrive.
                upstreamUpdatesReadable()
                guard now - lastHeard > updatesSilenceLimit(interval: interval, now: now), phase == .live else { return }
                rejoinUpstream(because: "nothing heard on the updates connection for \(now - lastHeard)", silent: true)
                return
            }
            for (object, copy) in relayed.copies where copy.snapshotAskedAt.map({ now - $0 > timeout }) == true { requestSnapshot(of: object) }
            // A snapshot request the socket did not take: ask again.
            for (object, copy) in relayed.copies where !copy.isSynced && copy.snapshotRequestID == 0 { requestSnapshot(of: object) }
        }
        // Idle, a ping keeps the relay's view id leased; with requests unanswered, it tells a
        // live upstream slow to answer them (a write waiting for its commit) from a dropped
        // connection, which the silence check above replaces.
        if dealer != nil, upstreamRequests.pingDue(at: now, idle: .seconds(2), timeout: timeout) {
            upstreamRequests.pinged(at: now)
            sendUpstream(.ping)
        }
        if forwarded.values.contains(where: { $0.deadline <= now }) {
            let expired = forwarded.filter { $0.value.deadline <= now }
            for key in expired.keys { forwarded[key] = nil }
            counters.expiredWrites.add(expired.count, ordering: .relaxed)
            logger.warning(
                "\(expired.count) forwarded writes got no answer from upstream within \(configuration.forwardedWriteTimeout); their views time them out"
            )
        }
        expireParked(now: now)
    }
}

extension Result {
    /// The error of a refusal, `nil` for a success.
    fileprivate var refusal: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
