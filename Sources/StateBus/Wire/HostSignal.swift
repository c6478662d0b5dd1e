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
