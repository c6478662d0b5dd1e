import StateBusWire

/// A reply a server of a control socket (a host, a relay) sends besides welcomes, write
/// answers and snapshot parts, which have encoders of their own (``HostWelcome``,
/// `WriteCodec`, `SnapshotPartEncoder`): the domain form, encoded once here (PROTOCOL.md
/// sections 4 to 6).
enum HostReply {
    /// What went wrong with a request; `leader` is the leader's control endpoint, for a
    /// standby's `NOT_LEADER`.
    case error(StateBusError, leader: String? = nil)
    /// The answer to a ping: the epoch of the server's run.
    case pong(epoch: UInt64)
    /// The connected views.
    case views(ConnectedView.ViewList)
    /// A call's outcome: its result and the object's sequence when the action returned, or
    /// why it failed.
    case call(callID: UInt64, outcome: CallOutcome)
    /// A version-1 snapshot chunk: named properties of one object at `sequence`.
    case snapshotChunk(SnapshotChunk)

    /// One chunk of a version-1 snapshot.
    struct SnapshotChunk {
        /// The object.
        var object: String
        /// The server's epoch.
        var epoch: UInt64
        /// The object's sequence the snapshot reflects.
        var sequence: UInt64
        /// The chunk's place: 0, 1, 2, …
        var index: Int
        /// Whether it is the snapshot's last chunk.
        var last: Bool
        /// Its properties: each one's name, value and version (the sequence at which it
        /// last changed).
        var properties: [(name: String, value: Value, version: UInt64)]
    }

    /// Encodes the reply for a request of `version` with id `requestID`.
    func encoded(version: UInt32, requestID: UInt64) throws -> [UInt8] {
        var reply = Statebus_V1_Reply()
        reply.protocolVersion = version
        reply.requestID = requestID
        switch self {
        case .error(let error, let leader):
            var wire = error.wire
            if let leader { wire.leaderControl = leader }
            reply.error = wire
        case .pong(let epoch):
            var pong = Statebus_V1_Pong()
            pong.epoch = epoch
            reply.pong = pong
        case .views(let list):
            reply.viewList = Statebus_V1_ViewList(list)
        case .call(let callID, let outcome):
            var callReply = Statebus_V1_CallReply()
            callReply.callID = callID
            switch outcome {
            case .success(let (value, sequence)):
                callReply.ok = true
                callReply.result = value.wire
                callReply.sequence = sequence
            case .failure(let error):
                callReply.error = error.wire
            }
            reply.callReply = callReply
        case .snapshotChunk(let chunk):
            var wire = Statebus_V1_SnapshotChunk()
            wire.object = chunk.object
            wire.epoch = chunk.epoch
            wire.sequence = chunk.sequence
            wire.chunkIndex = UInt32(clamping: chunk.index)
            wire.last = chunk.last
            wire.properties = chunk.properties.map { property in
                var state = Statebus_V1_PropertyState()
                state.name = property.name
                state.value = property.value.wire
                state.version = property.version
                return state
            }
            reply.snapshotChunk = wire
        }
        return try reply.serializedBytes()
    }
}

extension Value {
    /// The value's exact size on the wire (a call's result is refused past the views' bound).
    var encodedSize: Int { (try? wire.serializedBytes() as [UInt8])?.count ?? 0 }
}

/// A call's outcome: the action's result and the object's sequence when it returned (once a
/// view has applied that sequence, it holds every change the action made), or why it failed.
typealias CallOutcome = Result<(result: Value, sequence: UInt64), StateBusError>
