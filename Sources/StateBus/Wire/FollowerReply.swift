import StateBusWire

/// A reply a follower of a host (a view, a relay towards its upstream, a one-shot probe)
/// reads with the generated code: the domain form, read once here. Some replies have
/// hand-written readers that a follower tries first (a view: a write's answer, a welcome and
/// a snapshot part; a relay: a snapshot part); this reads whatever they did not take.
struct FollowerReply: Sendable {
    /// A welcome, as the host sent it: a relay serves its schemas on as they came.
    struct Welcome: Sendable {
        /// The message.
        let wire: Statebus_V1_Welcome

        /// The welcome as a view of `object` reads it.
        func reader(for object: String) -> WelcomeReader { WelcomeReader(wire, object: object) }

        /// What the host says about itself.
        var description: HostDescription { HostDescription(welcome: wire) }
    }

    /// What a reply says.
    enum Body: Sendable {
        /// The answer to a hello.
        case welcome(Welcome)
        /// A write's answer.
        case write(writeID: UInt64, verdict: WriteVerdict)
        /// A version-2 snapshot part in a form other than a host's, written again
        /// canonically (a whole reply), for the snapshot reader.
        case snapshotPart(canonical: [UInt8])
        /// A call's answer: its result and the object's sequence when the action returned,
        /// or why it failed.
        case call(callID: UInt64, outcome: CallOutcome)
        /// A request failed; `leader` is a standby's leader (`NOT_LEADER`), or empty.
        case error(StateBusError, leader: String)
        /// The connected views.
        case views(ConnectedView.ViewList)
        /// A pong, a version-1 snapshot chunk, or a reply without a body: nothing a follower
        /// acts on here.
        case other
    }

    /// The request it answers (0: one the host could not read).
    let requestID: UInt64
    /// The request's protocol version, as the host answered it.
    let protocolVersion: UInt32
    /// What it says.
    let body: Body
    /// The reply as it came, for a relay to pass a write's or call's answer on unchanged
    /// (``passedOn(version:requestID:)``).
    private let reply: Statebus_V1_Reply

    /// Reads a reply.
    /// - Throws: when the bytes are not a StateBus reply.
    init(bytes: [UInt8]) throws {
        let reply = try Statebus_V1_Reply(serializedBytes: bytes, options: WireDecoding.options)
        self.reply = reply
        requestID = reply.requestID
        protocolVersion = reply.protocolVersion
        switch reply.body {
        case .welcome(let welcome):
            body = .welcome(Welcome(wire: welcome))
        case .writeReply(let answer):
            body = .write(
                writeID: answer.writeID,
                verdict: answer.accepted ? .success(answer.sequence) : .failure(StateBusError(wire: answer.rejection)))
        case .snapshotPart(let part):
            body = (try? SnapshotPartReader.canonicalReply(part, requestID: reply.requestID)).map { .snapshotPart(canonical: $0) } ?? .other
        case .callReply(let answer):
            body = .call(
                callID: answer.callID,
                outcome: answer.ok
                    ? .success((result: Value(wire: answer.result), sequence: answer.sequence)) : .failure(StateBusError(wire: answer.error)))
        case .error(let error):
            body = .error(StateBusError(wire: error), leader: error.leaderControl)
        case .viewList(let list):
            body = .views(ConnectedView.ViewList(views: list.views.map(ConnectedView.init(wire:)), omitted: Int(list.omitted)))
        case .pong, .snapshotChunk, .none:
            body = .other
        }
    }
}

extension FollowerReply {
    /// The reply as it came, answering a request of `version` with id `requestID` instead:
    /// a relay passes its upstream's answer to a view's write or call on this way, so that
    /// what the view reads is what the host said, fields this relay does not know included.
    func passedOn(version: UInt32, requestID: UInt64) throws -> [UInt8] {
        var passed = reply
        passed.protocolVersion = version
        passed.requestID = requestID
        return try passed.serializedBytes()
    }
}

extension HostDescription {
    /// What a host's welcome says about it.
    init(welcome: Statebus_V1_Welcome) {
        var objects: [String: [Property]] = [:]
        var actions: [String: [ActionDefinition]] = [:]
        for object in welcome.objects {
            objects[object.name] = object.properties.map {
                Property(name: $0.name, kind: ValueKind(wire: $0.kind), typeName: $0.typeName, isWritable: $0.writable, isPersisted: $0.persisted)
            }
            if !object.actions.isEmpty { actions[object.name] = object.actions.map(ActionDefinition.init(wire:)) }
        }
        self.init(name: welcome.hostName, epoch: welcome.epoch, updatesEndpoint: welcome.updatesEndpoint, objects: objects, actions: actions)
    }
}
