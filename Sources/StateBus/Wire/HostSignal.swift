import StateBusWire

/// What a host publishes besides runs of updates, as a follower reads it (PROTOCOL.md
/// sections 5 and 7): the domain form, read once from the generated message.
enum HostSignal: Equatable {
    /// The host's run and each object's latest published sequence: a follower behind one
    /// lost updates; one of another epoch follows a host that restarted.
    case heartbeat(epoch: UInt64, sequences: [String: UInt64])
    /// The follower's subscriptions are live: what it receives from now on follows the
    /// snapshot it asks for next.
    case joinMarker(viewID: String, epoch: UInt64)

    /// Reads a heartbeat or join marker publication; `nil` when the bytes are neither (a
    /// publication on the heartbeat topic without a heartbeat is not read as one of epoch 0).
    init?(publication: UnsafeRawBufferPointer) {
        guard let decoded = try? Statebus_V1_Publication(serializedBytes: Array(publication), options: WireDecoding.options) else {
            return nil
        }
        if decoded.hasHeartbeat {
            let heartbeat = decoded.heartbeat
            self = .heartbeat(
                epoch: heartbeat.epoch,
                sequences: Dictionary(heartbeat.sequences.map { ($0.object, $0.sequence) }, uniquingKeysWith: { first, _ in first }))
        } else if decoded.hasJoinMarker {
            self = .joinMarker(viewID: decoded.joinMarker.viewID, epoch: decoded.joinMarker.epoch)
        } else {
            return nil
        }
    }
}

extension HostSignal {
    /// The publication of a heartbeat: the server's epoch and, per object in the order
    /// given, the sequence of its last published batch.
    static func heartbeatPublication(epoch: UInt64, sequences: some Sequence<(object: String, sequence: UInt64)>) throws -> [UInt8] {
        var heartbeat = Statebus_V1_Heartbeat()
        heartbeat.epoch = epoch
        heartbeat.sequences = sequences.map { object, sequence in
            var wire = Statebus_V1_ObjectSequence()
            wire.object = object
            wire.sequence = sequence
            return wire
        }
        var publication = Statebus_V1_Publication()
        publication.protocolVersion = StateBusProtocol.version1
        publication.heartbeat = heartbeat
        return try publication.serializedBytes()
    }

    /// The publication of a join marker for the view `viewID`.
    static func joinMarkerPublication(viewID: String, epoch: UInt64) throws -> [UInt8] {
        var marker = Statebus_V1_JoinMarker()
        marker.viewID = viewID
        marker.epoch = epoch
        var publication = Statebus_V1_Publication()
        publication.protocolVersion = StateBusProtocol.version1
        publication.joinMarker = marker
        return try publication.serializedBytes()
    }
}
