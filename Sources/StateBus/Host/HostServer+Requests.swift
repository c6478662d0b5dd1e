import Foundation
import StateBusWire
import ZeroMQ

// Answering a request: hellos, pings, the views list and goodbyes, once RequestReader has
// made the checks of PROTOCOL.md section 4 (size, decoding, version, keys). Writes,
// snapshots and calls have files of their own.

extension HostServer {
    /// Handles one request from a connection.
    func handle(identity: [UInt8], payload: ZeroMQ.Message) {
        let reader = requestReader
        switch reader.readWrite(identity: identity, payload: payload, maxMessageBytes: configuration.maxMessageBytes) {
        case .success(let (write, writer))?:
            if let standby = configuration.leadership?.refusal(write: true) {
                answer(write: write.writeID, with: .failure(standby.error), to: writer)
                return
            }
            handleWrite(write, from: writer)
            return
        case .failure(let refusal)?:
            refuse(refusal)
            return
        case nil:
            break
        }
        let request: ViewRequest
        let requester: Requester
        switch reader.read(identity: identity, payload: payload, maxMessageBytes: configuration.maxMessageBytes) {
        case .refused(let refusal):
            refuse(refusal)
            return
        case .request(let decoded, let sender, let keyName):
            if let keyName { clients.noteKeyName(keyName, of: identity) }
            (request, requester) = (decoded, sender)
        }
        if let leadership = configuration.leadership, request.needsLeader, let standby = leadership.refusal(write: request.writes) {
            refuseAsStandby(request, with: standby.error, leader: standby.leader, to: requester)
            return
        }
        switch request {
        case .hello(let hello):
            handleHello(hello, from: requester)
        case .snapshot(let object):
            sendSnapshot(of: object, to: requester)
        case .write(let write):
            // Unknown fields mean a client built for another schema: refuse rather than guess.
            if let property = write.propertyWithUnknownFields {
                counters.badMessages.add(1, ordering: .relaxed)
                let error = StateBusError(
                    .badRequest,
                    "the write has fields this host does not know\(property.isEmpty ? "" : " (in the change of '\(property)')"); it refuses them rather than store something else than was sent: check the protocol version",
                    object: write.object, property: property.isEmpty ? nil : property)
                answer(write: write.writeID, with: .failure(error), to: requester)
                return
            }
            handleWrite(
                WireWrite(
                    protocolVersion: requester.version, requestID: requester.requestID, object: write.object, writeID: write.writeID,
                    viewID: write.viewID, changes: write.changes),
                from: requester)
        case .ping:
            send(.pong(epoch: state.epoch), to: requester)
        case .call(let call):
            handleCall(call, from: requester)
        case .views:
            send(.views(clients.connectedViews()), to: requester)
        case .goodbye(let viewID):
            clients.goodbye(viewID: viewID, from: identity)
        case .empty:
            counters.badMessages.add(1, ordering: .relaxed)
            reply(
                to: requester,
                error: StateBusError(.badRequest, "the request has no body (hello, snapshot, write, call, views, ping or goodbye)"))
        }
    }

    /// Binds the hello's view id to the connection and welcomes it.
    private func handleHello(_ hello: FollowerRequest.Hello, from requester: Requester) {
        let token: [UInt8]
        let (control, epoch) = (control, state.epoch)
        switch clients.admit(
            hello, from: requester.identity, maxSubscriptionBytes: configuration.limits.maxSubscriptionBytes, speaker: "host",
            isConnected: { control.stillConnects($0, epoch: epoch) })
        {
        case .success(let bound):
            token = bound
        case .failure(let error):
            counters.badMessages.add(1, ordering: .relaxed)
            reply(to: requester, error: error)
            return
        }
        if !hello.viewID.isEmpty {
            // Without heartbeats a view cannot learn that the last publication was lost,
            // so its write would wait out its deadline: such a host answers every write.
            clients.setConfirmsByEcho(hello.confirmsByEcho && configuration.heartbeatInterval != nil, of: requester.identity)
        }
        send(
            welcome.reply(
                to: requester, knownSchema: hello.schemaHash, sessionToken: token,
                confirmsByEcho: clients.grantsConfirmsByEcho(to: requester.identity)),
            to: requester.identity)
    }

    /// Answers a request that needs the leader when this host does not lead: a write with a
    /// rejection and a call with its failure (the view sends them again to the leader), a
    /// hello or a snapshot with `NOT_LEADER` naming the leader.
    private func refuseAsStandby(_ request: ViewRequest, with error: StateBusError, leader: String, to requester: Requester) {
        switch request {
        case .write(let write):
            answer(write: write.writeID, with: .failure(error), to: requester)
        case .call(let call):
            answerCall(call.callID, with: .failure(error), to: requester)
        default:
            send(.error(error, leader: leader), to: requester)
        }
    }

    /// Answers a request the reader did not take: a write with a rejection (so the view
    /// rolls it back), a call with its failure, anything else with an error.
    private func refuse(_ refusal: RequestReader.Refusal) {
        if refusal.isForbidden {
            counters.forbiddenRequests.add(1, ordering: .relaxed)
        } else {
            counters.badMessages.add(1, ordering: .relaxed)
        }
        switch refusal.answer {
        case .call(let callID):
            answerCall(callID, with: .failure(refusal.error), to: refusal.requester)
        case .write(let writeID):
            counters.writesRejected.add(1, ordering: .relaxed)
            answer(write: writeID, with: .failure(refusal.error), to: refusal.requester)
        case .error:
            reply(to: refusal.requester, error: refusal.error)
        }
    }
}
