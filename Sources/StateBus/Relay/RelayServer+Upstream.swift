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
        phase = .hello
        phaseStarted = .now
        do throws(RuntimeFolderError) {
            try RuntimeFolder.checkEndpoint(configuration.upstreamControlEndpoint)
        } catch {
            logger.error("not connecting to \(configuration.upstreamControlEndpoint): \(error)")
            return
        }
        do {
            let dealer = try Socket(context: thread.context, type: .dealer)
            try secureUpstream(dealer)
            try dealer.set(.reconnectInterval, 100)
            try dealer.set(.reconnectIntervalMax, 1000)
            // Room for every forwarded write and the few other requests.
            try dealer.set(.sendHighWaterMark, Int32(clamping: configuration.maxForwardedWrites + 1_000))
            try dealer.set(.maxMessageSize, Int64(ReplicaLimits().maxIncomingMessageBytes))
            try dealer.connect(configuration.upstreamControlEndpoint)
            thread.register(dealer) { [unowned self] in self.upstreamControlReadable() }
            self.dealer = dealer
        } catch {
            logger.error("cannot connect to \(configuration.upstreamControlEndpoint): \(error)")
            return
        }
        sayHello()
    }

    /// Makes a socket a CURVE client of the upstream, when the relay has keys for it.
    private func secureUpstream(_ socket: Socket) throws {
        guard let security = configuration.upstreamSecurity else { return }
        try socket.makeCurveClient(keys: security.keys, serverKey: security.hostPublicKey)
    }

    private func sayHello() {
        var hello = Statebus_V1_Hello()
        hello.viewID = configuration.relayID
        hello.nodeName = configuration.name
        hello.objects = configuration.objects
        hello.sessionToken = sessionToken
        hello.relay = true
        var request = Statebus_V1_Request()
        request.hello = hello
        helloRequestID = sendUpstream(request) ?? 0
        phaseStarted = .now
    }

    /// Closes both upstream sockets.
    func closeUpstream() {
        if let dealer {
            thread.unregister(dealer)
            dealer.close()
        }
        if let subscriber {
            thread.unregister(subscriber)
            subscriber.close()
        }
        dealer = nil
        subscriber = nil
    }

    /// Joins the upstream again from the start (a new epoch, silence, an unbound connection).
    /// Every view is unbound and every write in flight answered `notJoined`, so views say
    /// hello again (their hellos wait until the relay has caught up) and send their
    /// unanswered writes again in order: no write overtakes one sent before it.
    func rejoinUpstream(because reason: String) {
        logger.info("joining \(configuration.upstreamControlEndpoint) again: \(reason)")
        counters.upstreamReconnects.add(1, ordering: .relaxed)
        closeUpstream()
        for (_, write) in forwarded {
            if let callID = write.callID {
                answerCall(
                    callID,
                    error: StateBusError(
                        .interrupted,
                        "the relay joined its upstream again (\(reason)) before the call was answered: the action may or may not have run; read the state before calling again"
                    ), to: write.identity, requestID: write.requestID)
                continue
            }
            var reply = Statebus_V1_Reply()
            reply.writeReply.writeID = write.writeID
            reply.writeReply.rejection =
                StateBusError(
                    .notJoined,
                    "the relay joined its upstream again (\(reason)) before the write was answered; say hello again and send it again (a copy already applied is answered, not applied twice)"
                ).wire
            send(reply, to: write.identity, requestID: write.requestID)
        }
        forwarded = [:]
        clients.unbindAll()
        upstreamWelcome = nil
        for name in copies.keys { copies[name]?.invalidate() }
        snapshotAskedAt = [:]
        counters.synced.store(false, ordering: .relaxed)
        connectUpstream()
    }

    /// Sends a request upstream. - Returns: its request id, or `nil` when the socket would not
    /// take it now.
    @discardableResult
    func sendUpstream(_ request: Statebus_V1_Request) -> UInt64? {
        guard let dealer else { return nil }
        var request = request
        request.protocolVersion = StateBusProtocol.version1
        let id = nextRequestID
        nextRequestID += 1
        request.requestID = id
        guard let bytes = try? request.serializedBytes() as [UInt8], (try? dealer.send(bytes, wait: false)) == true else { return nil }
        lastSent = .now
        return id
    }

    /// Forwards a view's write on the upstream connection. - Returns: the upstream request id.
    func sendUpstream(write: Statebus_V1_WriteRequest) -> UInt64? {
        guard phase != .hello else { return nil }
        var request = Statebus_V1_Request()
        request.write = write
        return sendUpstream(request)
    }

    // MARK: Control replies from upstream

    private func upstreamControlReadable() {
        guard let dealer else { return }
        for _ in 0..<256 {
            guard self.dealer === dealer, let message = try? dealer.tryReceive() else { return }
            lastHeard = .now
            guard !message.hasMore, let reply = try? Statebus_V1_Reply(serializedBytes: message.bytes, options: HostServer.decodingOptions) else {
                logger.warning("dropped a reply from upstream that is not a StateBus message")
                continue
            }
            switch reply.body {
            case .welcome(let welcome):
                guard phase == .hello, reply.requestID == helloRequestID else { continue }
                handleWelcome(welcome)
            case .snapshotChunk(let chunk):
                handleChunk(chunk, requestID: reply.requestID)
            case .writeReply(let answer):
                passBack(answer, requestID: reply.requestID)
            case .callReply(let answer):
                passBack(answer, requestID: reply.requestID)
            case .error(let error):
                let error = StateBusError(wire: error)
                if reply.requestID == helloRequestID {
                    logger.error("the upstream at \(configuration.upstreamControlEndpoint) refused the relay's hello: \(error)")
                } else {
                    logger.warning("upstream error: \(error)")
                }
            case .pong, .viewList, .snapshotPart, .none:
                break
            }
        }
    }

    private func handleWelcome(_ welcome: Statebus_V1_Welcome) {
        let served = configuration.objects.isEmpty ? welcome.objects.map(\.name) : configuration.objects
        let offered = Set(welcome.objects.map(\.name))
        let missing = served.filter { !offered.contains($0) }
        if !missing.isEmpty {
            logger.error(
                "the upstream at \(configuration.upstreamControlEndpoint) serves no object \(missing.joined(separator: ", ")); it serves \(offered.sorted().joined(separator: ", "))"
            )
        }
        let relayed = served.filter { offered.contains($0) }
        var limited = welcome
        limited.objects = welcome.objects.filter { relayed.contains($0.name) }
        epoch = welcome.epoch
        sessionToken = welcome.sessionToken
        gate = SubscriptionGate(objects: relayed, maxSubscriptionBytes: configuration.limits.maxSubscriptionBytes)
        var fresh: [String: ObjectCopy] = [:]
        for name in relayed { fresh[name] = ObjectCopy(name: name) }
        copies = fresh
        let endpoint = UpdatesEndpoint.reachable(welcome.updatesEndpoint, controlEndpoint: configuration.upstreamControlEndpoint)
        do {
            let subscriber = try Socket(context: thread.context, type: .sub)
            try secureUpstream(subscriber)
            try subscriber.set(.receiveHighWaterMark, 100_000)
            try subscriber.set(.maxMessageSize, Int64(ReplicaLimits().maxIncomingMessageBytes))
            for name in relayed { try subscriber.subscribe(Topic.updates(name)) }
            try subscriber.subscribe(Topic.heartbeat)
            try subscriber.subscribe(Topic.join(configuration.relayID))
            try subscriber.connect(endpoint)
            thread.register(subscriber) { [unowned self] in self.upstreamUpdatesReadable() }
            self.subscriber = subscriber
        } catch {
            logger.error("cannot subscribe to \(endpoint): \(error)")
            return
        }
        upstreamWelcome = limited
        phase = .joining
        phaseStarted = .now
    }

    func requestSnapshot(of object: String) {
        var snapshot = Statebus_V1_SnapshotRequest()
        snapshot.object = object
        var request = Statebus_V1_Request()
        request.snapshot = snapshot
        guard let id = sendUpstream(request) else {
            copies[object]?.invalidate()
            return
        }
        copies[object]?.awaitSnapshot(requestID: id)
        snapshotAskedAt[object] = .now
        counters.upstreamSnapshots.add(1, ordering: .relaxed)
        counters.synced.store(false, ordering: .relaxed)
    }

    private func handleChunk(_ chunk: Statebus_V1_SnapshotChunk, requestID: UInt64) {
        guard phase == .live, var copy = copies[chunk.object], copy.snapshotRequestID == requestID, requestID != 0 else { return }
        let outcome = copy.receive(chunk)
        copies[chunk.object] = copy
        switch outcome {
        case nil: requestSnapshot(of: chunk.object)
        case false?: break
        case true?:
            snapshotAskedAt[chunk.object] = nil
            noteSynced()
        }
    }

    /// Marks the relay synced when every copy is, and answers what waited for it.
    private func noteSynced() {
        let synced = copies.values.allSatisfy(\.isSynced)
        counters.synced.store(synced && phase == .live, ordering: .relaxed)
        if synced, !joinedBefore {
            joinedBefore = true
            logger.info("relaying \(copies.keys.sorted().joined(separator: ", ")) of \(configuration.upstreamControlEndpoint)")
        }
        retryParked()
    }

    /// Passes an upstream answer to the view that wrote.
    func passBack(_ answer: Statebus_V1_WriteReply, requestID: UInt64) {
        guard let write = forwarded.removeValue(forKey: requestID) else { return }
        counters.answeredWrites.add(1, ordering: .relaxed)
        var reply = Statebus_V1_Reply()
        reply.writeReply = answer
        send(reply, to: write.identity, requestID: write.requestID)
        if !answer.accepted, answer.rejection.code == .notJoined || answer.rejection.code == .viewIDInUse {
            // The upstream does not hold the relay's connection (it restarted, or ZeroMQ
            // reconnected the socket underneath): nothing was applied.
            rejoinUpstream(because: "the upstream answered a write with \(answer.rejection.code)")
        }
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
            guard let publication = try? Statebus_V1_Publication(serializedBytes: frames[1].bytes, options: HostServer.decodingOptions) else {
                logger.warning("dropped a publication from upstream that is not a StateBus message")
                continue
            }
            if frames[0].bytes == joinTopic {
                if phase == .joining, publication.joinMarker.epoch == epoch {
                    phase = .live
                    for name in copies.keys.sorted() { requestSnapshot(of: name) }
                }
                continue
            }
            // Unchanged, before anything else: views apply it as they would from the host.
            if (try? updates.send(frames[0], more: true, wait: false)) == true {
                // libzmq takes the rest of a message whose first frame it took.
                if (try? updates.send(frames[1], wait: false)) == true {
                    counters.relayedPublications.add(1, ordering: .relaxed)
                } else {
                    counters.droppedMessages.add(1, ordering: .relaxed)
                    logger.error("libzmq refused the body of a publication whose topic it took; views will see a gap and resync")
                }
            }
            if publication.hasHeartbeat {
                guard publication.heartbeat.epoch == epoch else {
                    if phase != .hello { rejoinUpstream(because: "the upstream's epoch changed") }
                    return
                }
                guard phase == .live else { continue }
                for announced in publication.heartbeat.sequences {
                    guard let copy = copies[announced.object], copy.isSynced, announced.sequence > copy.sequence else { continue }
                    requestSnapshot(of: announced.object)
                    changed = true
                }
            }
            for batch in publication.updates {
                guard batch.epoch == epoch else {
                    if phase != .hello { rejoinUpstream(because: "the upstream's epoch changed") }
                    return
                }
                guard phase == .live, var copy = copies[batch.object] else { continue }
                let outcome = copy.apply(batch, maxBufferedBytes: configuration.maxBufferedUpdateBytes)
                copies[batch.object] = copy
                if outcome == .gap {
                    requestSnapshot(of: batch.object)
                    changed = true
                }
            }
        }
        if changed { counters.synced.store(copies.values.allSatisfy(\.isSynced), ordering: .relaxed) }
    }

    // MARK: Liveness

    /// Every 100 ms: asks again for what went unanswered, notices a silent upstream, keeps
    /// the relay's view id leased with a ping, and expires what waited too long.
    func tick() {
        let now = ContinuousClock.now
        let timeout = configuration.upstreamRequestTimeout
        switch phase {
        case .hello:
            if dealer == nil {
                connectUpstream()
            } else if now - phaseStarted > timeout {
                logger.warning(
                    "no welcome from \(configuration.upstreamControlEndpoint) within \(timeout): is it running? With keys: does it list this relay's key with the role relay, and is the upstream key given its public key? Asking again"
                )
                sayHello()
            }
        case .joining:
            if now - phaseStarted > timeout { rejoinUpstream(because: "no join marker within \(timeout)") }
        case .live:
            if let interval = upstreamWelcome.map({ Duration.milliseconds(Int($0.heartbeatIntervalMs)) }), interval > .zero,
                now - lastHeard > interval * configuration.missedHeartbeatsBeforeStale
            {
                // Silence is the upstream's only when nothing waits to be read: after this
                // process was starved of CPU, this timer can run before what did arrive.
                upstreamUpdatesReadable()
                guard now - lastHeard > interval * configuration.missedHeartbeatsBeforeStale, phase == .live else { return }
                rejoinUpstream(because: "nothing heard for \(now - lastHeard)")
                return
            }
            for (object, asked) in snapshotAskedAt where now - asked > timeout { requestSnapshot(of: object) }
            // A snapshot request the socket did not take: ask again.
            for (object, copy) in copies where !copy.isSynced && copy.snapshotRequestID == 0 { requestSnapshot(of: object) }
        }
        if dealer != nil, now - lastSent > .seconds(2) {
            var request = Statebus_V1_Request()
            request.ping = Statebus_V1_Ping()
            sendUpstream(request)
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
