import Foundation
import StateBusWire
import ZeroMQ

// Reading a request and answering it: the order of checks of PROTOCOL.md section 4 (frames,
// size, decoding, version, keys, body), hellos, pings, the views list and goodbyes. Writes,
// snapshots and calls have files of their own.

extension HostServer {
    /// Handles one request from a connection.
    func handle(identity: [UInt8], payload: ZeroMQ.Message) {
        guard payload.count <= configuration.maxMessageBytes else {
            counters.badMessages.add(1, ordering: .relaxed)
            reply(
                to: Requester(identity: identity),
                error: StateBusError(.tooLarge, "the request has \(payload.count) bytes; this host accepts at most \(configuration.maxMessageBytes)"))
            return
        }
        // The write path's fast decoder takes a write with nothing unusual in it; anything
        // else (and any write it does not take) is decoded the general way below.
        if let write = payload.withUnsafeBytes(WriteCodec.decodeWrite), StateBusProtocol.versions.contains(write.protocolVersion) {
            let requester = Requester(identity: identity, requestID: write.requestID, version: write.protocolVersion)
            if let refusal = keyGuard?.refusal(forWriteTo: write.object, viewID: write.viewID, from: payload) {
                counters.forbiddenRequests.add(1, ordering: .relaxed)
                counters.writesRejected.add(1, ordering: .relaxed)
                answer(write: write.writeID, with: .failure(refusal), to: requester)
                return
            }
            handleWrite(write, from: requester)
            return
        }
        let request: Statebus_V1_Request
        do {
            request = try payload.withUnsafeBytes { bytes in
                try Statebus_V1_Request(
                    serializedBytes: Data(
                        bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!), count: bytes.count,
                        deallocator: .none),
                    options: Self.decodingOptions
                )
            }
        } catch {
            counters.badMessages.add(1, ordering: .relaxed)
            reply(to: Requester(identity: identity), error: StateBusError(.badRequest, "not a StateBus request (\(error)); see proto/PROTOCOL.md"))
            return
        }
        guard StateBusProtocol.versions.contains(request.protocolVersion) else {
            counters.badMessages.add(1, ordering: .relaxed)
            reply(
                to: Requester(identity: identity, requestID: request.requestID),
                error: StateBusError(
                    .unsupportedVersion,
                    "protocol version \(request.protocolVersion) is not supported; this host speaks versions \(StateBusProtocol.versions.lowerBound) and \(StateBusProtocol.versions.upperBound)"
                ))
            return
        }
        let requester = Requester(identity: identity, requestID: request.requestID, version: request.protocolVersion)
        if let refusal = keyGuard?.refusal(for: request, from: payload) {
            refuse(request, refusal, to: requester)
            return
        }
        if case .hello = request.body, let keyName = keyGuard?.keyName(of: payload) {
            clients.noteKeyName(keyName, of: identity)
        }
        switch request.body {
        case .hello(let hello):
            handleHello(hello, from: requester)
        case .snapshot(let snapshot):
            sendSnapshot(of: snapshot.object, to: requester)
        case .write(let write):
            // Unknown fields mean a client built for another schema: refuse rather than guess.
            if !write.unknownFields.data.isEmpty || write.changes.contains(where: \.carriesUnknownFields) {
                counters.badMessages.add(1, ordering: .relaxed)
                let property = write.changes.first(where: \.carriesUnknownFields)?.property
                let error = StateBusError(
                    .badRequest,
                    "the write has fields this host does not know\(property.map { " (in the change of '\($0)')" } ?? ""); it refuses them rather than store something else than was sent: check the protocol version",
                    object: write.object, property: property)
                answer(write: write.writeID, with: .failure(error), to: requester)
                return
            }
            handleWrite(
                WireWrite(
                    protocolVersion: request.protocolVersion, requestID: request.requestID, object: write.object, writeID: write.writeID,
                    viewID: write.viewID, changes: write.changes.map(PropertyChange.init(wire:))),
                from: requester)
        case .ping:
            var reply = Statebus_V1_Reply()
            var pong = Statebus_V1_Pong()
            pong.epoch = state.epoch
            reply.pong = pong
            send(reply, to: requester)
        case .call(let call):
            handleCall(call, from: requester)
        case .views:
            send(Statebus_V1_Reply(viewList: clients.connectedViews()), to: requester)
        case .goodbye(let goodbye):
            clients.goodbye(viewID: goodbye.viewID, from: identity)
        case .none:
            counters.badMessages.add(1, ordering: .relaxed)
            reply(
                to: requester,
                error: StateBusError(.badRequest, "the request has no body (hello, snapshot, write, call, views, ping or goodbye)"))
        }
    }

    /// Binds the hello's view id to the connection and welcomes it.
    private func handleHello(_ hello: Statebus_V1_Hello, from requester: Requester) {
        // The join subscription carries the view id and must fit the updates socket's
        // frame limit; a longer id could never join, so refuse it now with a reason.
        let longestViewID = configuration.limits.maxSubscriptionBytes - 4
        guard hello.viewID.utf8.count <= longestViewID else {
            counters.badMessages.add(1, ordering: .relaxed)
            reply(
                to: requester,
                error: StateBusError(
                    .badRequest,
                    "the view id has \(hello.viewID.utf8.count) bytes; this host takes at most \(longestViewID) (HostLimits.maxSubscriptionBytes - 4): use a shorter id, such as a UUID"
                ))
            return
        }
        if hello.relay, hello.viewID.isEmpty {
            counters.badMessages.add(1, ordering: .relaxed)
            reply(to: requester, error: StateBusError(.badRequest, "a relay's hello needs a view id of its own"))
            return
        }
        var token: [UInt8] = []
        if !hello.viewID.isEmpty {
            switch clients.hello(viewID: hello.viewID, from: requester.identity, token: Array(hello.sessionToken)) {
            case .bound(let bound):
                token = bound
                if hello.relay { clients.markRelay(requester.identity) }
                // Without heartbeats a view cannot learn that the last publication was lost,
                // so its write would wait out its deadline: such a host answers every write.
                clients.setConfirmsByEcho(hello.confirmsByEcho && configuration.heartbeatInterval != nil, of: requester.identity)
                clients.describe(requester.identity, nodeName: hello.nodeName)
            case .inUse:
                counters.badMessages.add(1, ordering: .relaxed)
                reply(
                    to: requester,
                    error: StateBusError(
                        .viewIDInUse,
                        "view id '\(hello.viewID)' belongs to another live connection; give each replica its own id (ReplicaConfiguration.viewID), or wait \(configuration.viewIDLease) after the other stopped"
                    ))
                return
            }
        }
        send(
            welcome.reply(
                to: requester, knownSchema: hello.schemaHash, sessionToken: token,
                confirmsByEcho: clients.grantsConfirmsByEcho(to: requester.identity)),
            to: requester.identity)
    }

    /// Answers a request its key may not make: a write with a rejection (so the view rolls
    /// it back), anything else with an error.
    private func refuse(_ request: Statebus_V1_Request, _ error: StateBusError, to requester: Requester) {
        counters.forbiddenRequests.add(1, ordering: .relaxed)
        switch request.body {
        case .call(let call):
            answerCall(call.callID, with: .failure(error), to: requester)
        case .write(let write):
            counters.writesRejected.add(1, ordering: .relaxed)
            answer(write: write.writeID, with: .failure(error), to: requester)
        default:
            reply(to: requester, error: error)
        }
    }
}
