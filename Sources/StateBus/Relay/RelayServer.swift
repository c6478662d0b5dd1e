import Foundation
import Logging
import StateBusRuntime
import StateBusWire
import SwiftProtobuf
import ZeroMQ

/// The relay's sockets and every message it handles, on its I/O loop thread only (no locks).
///
/// **Downstream** (this file) it is a host to its views, in protocol versions 1 and 2: a
/// ROUTER for hellos, snapshots, writes and pings, and an XPUB in manual mode with the host's
/// ``SubscriptionGate``. Hellos and snapshot requests that come while the relay is catching up
/// with its upstream wait, bounded in number and time. **Upstream** (``RelayServer`` upstream
/// extension) it is a version-2 view: one DEALER and one SUB, a copy of each object
/// (``ObjectCopy``), every publication relayed unchanged (version-1 views get the same batches
/// written in version 1's form), writes forwarded and their answers passed back.
///
/// **Order of writes.** A view's writes reach the upstream in the order the view sent them:
/// they go on the relay's one upstream connection in the order they arrive. When that
/// connection is rebuilt, every view is unbound and every write in flight answered
/// `notJoined`, so a view says hello again and sends its unanswered writes again, in order,
/// before any later one is forwarded.
final class RelayServer {
    /// A write or call sent upstream and not answered yet.
    struct ForwardedWrite {
        /// The view to answer, in its own protocol version.
        var requester: Requester
        var viewID: String
        var writeID: UInt64
        var deadline: ContinuousClock.Instant
        /// The view's call id, when this is an action call rather than a write.
        var callID: UInt64? = nil
    }

    /// A hello or snapshot request waiting for the relay to catch up.
    struct ParkedRequest {
        var requester: Requester
        var request: ViewRequest
        var deadline: ContinuousClock.Instant
    }

    /// What the log has said of the relay's joins upstream.
    enum JoinsLogged {
        /// No join was done yet.
        case none
        /// The current join was logged as done.
        case current
        /// An earlier join was; the current one is under way.
        case earlier
    }

    /// Where the upstream connection stands.
    enum UpstreamPhase {
        /// A hello is on its way (or the connection is being rebuilt).
        case hello
        /// Subscribed; waiting for the join marker that says the subscriptions are live.
        case joining
        /// Joined: snapshots asked for, publications applied to the copies.
        case live
    }

    let configuration: RelayConfiguration
    let counters: RelayCounters
    let thread: LoopThread
    let control: Socket
    let updates: Socket
    let controlEndpoint: String
    let updatesEndpoint: String
    /// Each view connection's view id, queued replies and parked requests.
    var clients: ClientTable
    /// Which subscriptions the updates socket admits: the relayed objects' topics.
    var gate: SubscriptionGate
    var logger: Logger { configuration.logger }

    // Upstream state (see RelayServer+Upstream.swift).
    /// Where the upstream connection stands, and since when (its deadline counts from then).
    var upstreamPhase = PhaseClock(UpstreamPhase.hello)
    var phase: UpstreamPhase { upstreamPhase.current }
    /// The sockets to the upstream.
    var upstreamSockets = HostSockets()
    var dealer: Socket? { upstreamSockets.control }
    var subscriber: Socket? { upstreamSockets.updates }
    /// The upstream's welcome, and the one the relay gives its views from it.
    var welcomes = RelayWelcomes()
    var upstreamWelcome: Statebus_V1_Welcome? { welcomes.upstream }
    /// The relayed objects whose version-1 topic some view subscribed to: their runs are also
    /// written in version 1's form.
    var publishesVersion1: Set<String> = []
    /// The upstream run the relay joined (its welcome's epoch; 0 before the first).
    var epoch: UInt64 { upstreamWelcome?.epoch ?? 0 }
    /// The requests upstream: ids, the hello's, and their silence.
    var upstreamRequests = ControlRequests()
    /// The relayed objects: each one's copy, and its name by the upstream's index.
    var relayed = RelayedObjects()
    var forwarded: [UInt64: ForwardedWrite] = [:]
    var parked: [ParkedRequest] = []
    /// The upstream's control endpoints (the hosts of a high-availability group, or one) and
    /// the one in use.
    var upstreamEndpoints: ControlEndpoints
    /// The upstream control endpoint in use.
    var upstreamEndpoint: String { upstreamEndpoints.current }
    /// When the upstream's updates connection last brought anything (a publication, a
    /// heartbeat, the join marker): its silence, once live, makes the relay join again.
    var lastHeard = ContinuousClock.now
    /// How far the relay's joins upstream are told in its log: "relaying …" once per join
    /// (so a re-join's "joining … again" is followed by its outcome), "again" after the first.
    var joinsLogged = JoinsLogged.none
    /// CURVE, the ZAP handler and authorization by role towards views, when the relay has keys.
    let keyGuard: HostGuard?
    /// What the key guard counts (refused handshakes, forbidden requests).
    let guardCounters = HostCounters()

    init(thread: LoopThread, configuration: RelayConfiguration, counters: RelayCounters) throws {
        upstreamEndpoints = try ControlEndpoints(configuration.upstreamControlEndpoint)
        let exposed = [configuration.controlEndpoint, configuration.updatesEndpoint].filter { !NetworkExposure.isLocal($0) }
        if !exposed.isEmpty, configuration.security == nil {
            guard configuration.allowsInsecureNetwork else {
                throw StateBusError(
                    .unsafeEndpoint,
                    "refusing to relay on \(exposed.joined(separator: " and ")) without CURVE keys: anyone who can reach it would read and write every object. "
                        + "Give the relay a key and the keys it admits (--key relay.key --authorized authorized.keys; RelayConfiguration.security), "
                        + "serve ipc://, or accept the risk with --insecure (RelayConfiguration.allowsInsecureNetwork)")
            }
            configuration.logger.warning("INSECURE: relaying on \(exposed.joined(separator: " and ")) without CURVE keys (--insecure)")
        }
        self.thread = thread
        self.configuration = configuration
        self.counters = counters
        clients = ClientTable(maximumClients: configuration.maxClients, lease: configuration.viewIDLease)
        gate = SubscriptionGate(objects: configuration.objects, maxSubscriptionBytes: configuration.limits.maxSubscriptionBytes)
        let sockets = try ServingSockets(context: thread.context, maxMessageBytes: configuration.maxMessageBytes, limits: configuration.limits)
        (control, updates) = (sockets.control, sockets.updates)
        // Before the binds: the sockets must be CURVE servers, and the ZAP handler bound,
        // before the first view connects. The guard is the host's, with the relay's keys.
        if configuration.security != nil {
            var guarded = HostConfiguration(
                name: configuration.name, controlEndpoint: configuration.controlEndpoint, updatesEndpoint: configuration.updatesEndpoint,
                persistence: .disabled, logger: configuration.logger)
            guarded.security = configuration.security
            guarded.limits = configuration.limits
            keyGuard = try HostGuard.install(configuration: guarded, thread: thread, control: control, updates: updates, counters: guardCounters)
        } else {
            keyGuard = nil
        }
        try HostServer.prepareFolder(for: configuration.controlEndpoint)
        try HostServer.prepareFolder(for: configuration.updatesEndpoint)
        controlEndpoint = try control.bind(configuration.controlEndpoint)
        updatesEndpoint = try updates.bind(configuration.updatesEndpoint)
        HostServer.restrictSocketFile(of: controlEndpoint)
        HostServer.restrictSocketFile(of: updatesEndpoint)
        keyGuard?.updatesBound(updates, at: updatesEndpoint)

        thread.register(control) { [unowned self] in self.controlReadable() }
        thread.register(updates) { [unowned self] in self.subscriptionsReadable() }
        thread.scheduleTimer(after: .milliseconds(10), repeating: .milliseconds(10)) { [unowned self] in self.drainBacklogs() }
        thread.scheduleTimer(after: .milliseconds(100), repeating: .milliseconds(100)) { [unowned self] in self.tick() }
        thread.onShutdown { [unowned self] in self.closeUpstream() }
        connectUpstream()
    }

    // MARK: Requests from views

    private func controlReadable() {
        drainBacklogs()
        for _ in 0..<256 {
            guard let frames = try? control.tryReceiveMultipart() else { return }
            guard frames.count == 2 else {
                counters.badMessages.add(1, ordering: .relaxed)
                if let identity = frames.first?.bytes, frames.count > 2 {
                    reply(
                        to: Requester(identity: identity),
                        error: StateBusError(.badRequest, "a request is exactly one frame after the routing id; got \(frames.count - 1) frames"))
                }
                continue
            }
            let identity = frames[0].bytes
            // Read, so that libzmq never stops reading the connection; not handled.
            if clients.discards(identity) { continue }
            clients.touch(identity)
            if clients.isBacklogged(identity) {
                let backlog = clients.park(frames[1], from: identity)
                if backlog > configuration.maxClientBacklogBytes { dropClient(identity, backlog: backlog) }
                continue
            }
            handle(identity: identity, payload: frames[1])
        }
    }

    /// The largest request the relay takes: its own bound, or its upstream's when lower.
    private var maxMessageBytes: Int {
        guard let upstream = upstreamWelcome?.maxMessageBytes, upstream > 0 else { return configuration.maxMessageBytes }
        return min(configuration.maxMessageBytes, Int(clamping: upstream))
    }

    private func handle(identity: [UInt8], payload: ZeroMQ.Message) {
        let reader = RequestReader(speaker: "relay", keyGuard: keyGuard)
        switch reader.read(identity: identity, payload: payload, maxMessageBytes: maxMessageBytes) {
        case .request(let request, let requester, let keyName):
            if let keyName { clients.noteKeyName(keyName, of: identity) }
            handle(request, from: requester, deadline: .now + configuration.parkedRequestTimeout)
        case .refused(let refusal):
            (refusal.isForbidden ? counters.forbiddenRequests : counters.badMessages).add(1, ordering: .relaxed)
            switch refusal.answer {
            case .call(let callID): answerCall(callID, error: refusal.error, to: refusal.requester)
            case .write(let writeID): answerWrite(writeID, refusal: refusal.error, to: refusal.requester)
            case .error: reply(to: refusal.requester, error: refusal.error)
            }
        }
    }

    /// Handles a decoded request; a hello or snapshot the relay cannot answer yet waits
    /// until `deadline`.
    private func handle(_ request: ViewRequest, from requester: Requester, deadline: ContinuousClock.Instant) {
        switch request {
        case .hello(let hello):
            guard let welcome = welcomes.views, phase == .live else {
                park(request, from: requester, deadline: deadline)
                return
            }
            answerHello(hello, welcomes: welcome, from: requester)
        case .snapshot(let object):
            guard upstreamWelcome != nil, phase == .live else {
                park(request, from: requester, deadline: deadline)
                return
            }
            guard let copy = relayed.copies[object] else {
                reply(to: requester, error: StateBusError(.unknownObject, "this relay relays no object '\(object)'", object: object))
                return
            }
            guard copy.isSynced else {
                park(request, from: requester, deadline: deadline)
                return
            }
            sendSnapshot(of: copy, to: requester)
        case .write(let write):
            forward(write, from: requester)
        case .call(let call):
            forward(call, from: requester)
        case .ping:
            send(.pong(epoch: epoch), to: requester)
        case .views:
            send(.views(clients.connectedViews()), to: requester)
        case .goodbye(let viewID):
            clients.goodbye(viewID: viewID, from: requester.identity)
        case .empty:
            counters.badMessages.add(1, ordering: .relaxed)
            reply(to: requester, error: StateBusError(.badRequest, "the request has no body (hello, snapshot, write, call, views, ping or goodbye)"))
        }
    }

    private func answerHello(_ hello: FollowerRequest.Hello, welcomes: HostWelcome, from requester: Requester) {
        let (control, epoch) = (control, epoch)
        switch clients.admit(
            hello, from: requester.identity, maxSubscriptionBytes: configuration.limits.maxSubscriptionBytes, speaker: "relay",
            isConnected: { control.stillConnects($0, epoch: epoch) })
        {
        case .success(let token):
            send(welcomes.reply(to: requester, knownSchema: hello.schemaHash, sessionToken: token), to: requester.identity)
        case .failure(let error):
            counters.badMessages.add(1, ordering: .relaxed)
            reply(to: requester, error: error)
        }
    }

    /// The relay's welcomes for the upstream's welcome: version 2 lists every object of the
    /// upstream (their indexes are the ones runs carry), version 1 the relayed ones.
    func makeWelcomes(from upstream: Statebus_V1_Welcome, relayed: [String]) -> HostWelcome? {
        var base = upstream
        base.objects = []
        base.updatesEndpoint = configuration.advertisedUpdatesEndpoint ?? updatesEndpoint
        base.hostName = configuration.name
        base.maxMessageBytes = UInt64(maxMessageBytes)
        base.sessionToken = Data()
        return try? HostWelcome(
            base: base, version1Objects: upstream.objects.filter { relayed.contains($0.name) }.map(\.version1),
            version2Objects: upstream.objects, schemaHash: upstream.schemaHash)
    }

    private func sendSnapshot(of copy: ObjectCopy, to requester: Requester) {
        counters.servedSnapshots.add(1, ordering: .relaxed)
        if requester.version == StateBusProtocol.version1 {
            sendChunks(of: copy, to: requester)
            return
        }
        let limit = max(1, configuration.limits.maxPublicationBytes)
        var encoder = SnapshotPartEncoder()
        var part = 0
        var property = 0
        let count = copy.values.count
        repeat {
            encoder.removeAll()
            // As a host fills its parts: the whole reply stays within the limit, but for a
            // single larger property, which travels alone.
            while property < count,
                encoder.count == 0
                    || encoder.replySizeBound(appending: copy.values[property].encodedSizeBound, requestID: requester.requestID) <= limit
            {
                encoder.append(property: property, value: copy.values[property], version: copy.versions[property])
                property += 1
            }
            let bytes = encoder.reply(
                requestID: requester.requestID, object: copy.index, epoch: copy.epoch, sequence: copy.sequence, part: part, last: property == count)
            if !send(bytes, to: requester.identity), !clients.isBacklogged(requester.identity) { return }
            part += 1
        } while property < count
    }

    /// Version 1: chunks of 1,000 named properties.
    private func sendChunks(of copy: ObjectCopy, to requester: Requester) {
        let count = copy.values.count
        var index = 0
        var start = 0
        repeat {
            let end = min(count, start + 1000)
            let chunk = HostReply.SnapshotChunk(
                object: copy.name, epoch: copy.epoch, sequence: copy.sequence, index: index, last: end == count,
                properties: (start..<end).map { (copy.layout.names[$0], copy.values[$0], copy.versions[$0]) })
            if !send(.snapshotChunk(chunk), to: requester), !clients.isBacklogged(requester.identity) { return }
            index += 1
            start = end
        } while start < count
    }

    /// Why a view's write or call cannot be forwarded: its view id is not bound to this
    /// connection, or the relay does not relay the object; `nil` when it can go.
    func admission(of viewID: String, to object: String, from identity: [UInt8], for what: String) -> StateBusError? {
        switch clients.admitsWrite(viewID: viewID, from: identity) {
        case .admitted: break
        case .notJoined:
            return StateBusError(
                .notJoined,
                "view id '\(viewID)' has not said hello on this connection to this relay (it rejoined its upstream, or the connection is new); send a hello first, then the \(what) again",
                object: object)
        case .heldByAnother:
            return StateBusError(
                .viewIDInUse, "view id '\(viewID)' belongs to another connection; this connection may not \(what) as it", object: object)
        }
        if relayed.copies[object] == nil, upstreamWelcome != nil {
            return StateBusError(.unknownObject, "this relay relays no object '\(object)'", object: object)
        }
        return nil
    }

    /// Sends a view's write upstream, or refuses it with the reason.
    private func forward(_ write: ViewRequest.WriteRequest, from requester: Requester) {
        var refusal = admission(of: write.viewID, to: write.object, from: requester.identity, for: "write")
        if refusal == nil, forwarded.count >= configuration.maxForwardedWrites {
            refusal = StateBusError(
                .notJoined,
                "this relay has \(forwarded.count) writes on their way upstream (RelayConfiguration.maxForwardedWrites); say hello again and send the write again",
                object: write.object)
            clients.unbind(viewID: write.viewID)
        }
        if refusal == nil {
            let sent = phase == .hello ? nil : sendUpstream(.forwardedWrite(write))
            if let upstreamRequestID = sent {
                forwarded[upstreamRequestID] = ForwardedWrite(
                    requester: requester, viewID: write.viewID, writeID: write.writeID, deadline: .now + configuration.forwardedWriteTimeout)
                counters.forwardedWrites.add(1, ordering: .relaxed)
                return
            }
            refusal = StateBusError(
                .notJoined, "this relay cannot reach its upstream now; say hello again and send the write again", object: write.object)
            // Later writes of this view must not overtake this one.
            clients.unbind(viewID: write.viewID)
        }
        guard let refusal else { return }
        counters.badMessages.add(1, ordering: .relaxed)
        answerWrite(write.writeID, refusal: refusal, to: requester)
    }

    /// Refuses a view's write.
    func answerWrite(_ writeID: UInt64, refusal: StateBusError, to requester: Requester) {
        let bytes = WriteCodec.reply(
            protocolVersion: requester.version, requestID: requester.requestID, writeID: writeID, outcome: WriteCodec.Outcome(.failure(refusal)))
        send(bytes, to: requester.identity)
    }

    /// Keeps a request the relay cannot answer yet; the oldest is answered with an error when
    /// too many wait.
    private func park(_ request: ViewRequest, from requester: Requester, deadline: ContinuousClock.Instant) {
        if parked.count >= configuration.maxParkedRequests {
            let oldest = parked.removeFirst()
            expire(
                oldest, reason: "\(configuration.maxParkedRequests) requests wait for this relay to catch up (RelayConfiguration.maxParkedRequests)")
        }
        parked.append(ParkedRequest(requester: requester, request: request, deadline: deadline))
    }

    private func expire(_ request: ParkedRequest, reason: String) {
        counters.expiredRequests.add(1, ordering: .relaxed)
        reply(
            to: request.requester,
            error: StateBusError(
                .other, "the relay has not caught up with its upstream at \(upstreamEndpoint): \(reason); asking again is safe"))
    }

    /// Handles the waiting requests again: those the relay can answer now are answered.
    func retryParked() {
        guard !parked.isEmpty else { return }
        let waiting = parked
        parked = []
        for request in waiting { handle(request.request, from: request.requester, deadline: request.deadline) }
    }

    /// Answers waiting requests whose deadline passed.
    func expireParked(now: ContinuousClock.Instant) {
        guard parked.contains(where: { $0.deadline <= now }) else { return }
        var kept: [ParkedRequest] = []
        for request in parked {
            if request.deadline <= now {
                expire(request, reason: "waited \(configuration.parkedRequestTimeout) (RelayConfiguration.parkedRequestTimeout)")
            } else {
                kept.append(request)
            }
        }
        parked = kept
    }

    // MARK: Replies to views

    /// Answers a view with an error.
    func reply(to requester: Requester, error: StateBusError) {
        send(.error(error), to: requester)
    }

    /// Sends a reply the relay makes in the view's version, or queues it behind the view's
    /// earlier ones (never dropped while the view is there).
    /// - Returns: `false` when it did not go out now.
    @discardableResult
    func send(_ reply: HostReply, to requester: Requester) -> Bool {
        guard let bytes = try? reply.encoded(version: requester.version, requestID: requester.requestID) else {
            logger.error("could not encode a reply")
            return false
        }
        return send(bytes, to: requester.identity)
    }

    /// Sends an encoded reply (see ``send(_:to:)-(HostReply,_)``).
    @discardableResult
    func send(_ bytes: [UInt8], to identity: [UInt8]) -> Bool {
        guard !clients.isBacklogged(identity) else {
            queue(bytes, to: identity)
            return false
        }
        switch deliver(bytes, to: identity) {
        case .sent: return true
        case .full:
            queue(bytes, to: identity)
            return false
        case .gone:
            clients.drop(identity)
            return false
        }
    }

    private func queue(_ bytes: [UInt8], to identity: [UInt8]) {
        let backlog = clients.queueReply(bytes, to: identity)
        if backlog > configuration.maxClientBacklogBytes { dropClient(identity, backlog: backlog) }
    }

    private func deliver(_ bytes: [UInt8], to identity: [UInt8]) -> ClientTable.Delivery {
        do {
            guard try control.send(identity, more: true, wait: false) else { return .full }
            // libzmq takes the rest of a message whose first frame it took.
            if try !control.send(bytes, wait: false) {
                counters.droppedMessages.add(1, ordering: .relaxed)
                logger.error("libzmq refused the body of a reply whose routing frame it took; the reply is lost")
            }
            return .sent
        } catch {
            return .gone
        }
    }

    private func drainBacklogs() {
        guard !clients.backlogged.isEmpty else { return }
        for identity in clients.backlogged {
            clients.drainBacklog(of: identity) { deliver($0, to: identity) }
            for request in clients.takeParked(of: identity) {
                handle(identity: identity, payload: request)
            }
        }
    }

    private func dropClient(_ identity: [UInt8], backlog: Int) {
        let viewID = clients.viewID(of: identity) ?? "(no hello)"
        clients.discard(identity)
        logger.warning(
            "dropped view \(viewID): it does not read its replies (\(backlog) bytes waiting, more than RelayConfiguration.maxClientBacklogBytes \(configuration.maxClientBacklogBytes)); whatever it sends on this connection from now on is discarded"
        )
    }

    // MARK: Subscriptions of views

    private func subscriptionsReadable() {
        for _ in 0..<256 {
            guard let message = try? updates.tryReceive() else { return }
            // Manual mode: each admission applies to the connection the message came from.
            switch gate.decide(message.bytes) {
            case .admit(let topic, let served):
                try? updates.subscribe(topic)
                if case .updates(let object, let version) = served, version == StateBusProtocol.version1, object < gate.objects.count {
                    publishesVersion1.insert(gate.objects[object])
                }
            case .join(let topic, let viewID):
                try? updates.subscribe(topic)
                // Not sent (the view's queue full): counted, and the view, which gets no
                // marker, joins again after its request timeout.
                let sent = (try? HostSignal.joinMarkerPublication(viewID: viewID, epoch: epoch)).map { bytes in
                    (try? updates.send(multipart: [topic, bytes], wait: false)) == true
                }
                if sent != true { counters.droppedMessages.add(1, ordering: .relaxed) }
                try? updates.unsubscribe(topic)
            case .unsubscribe(let topic):
                try? updates.unsubscribe(topic)
            case .refuse, .ignore:
                break
            }
        }
    }
}
