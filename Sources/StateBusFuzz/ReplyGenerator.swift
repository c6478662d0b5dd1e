import Foundation
import StateBusWire
import SwiftProtobuf

/// Generates the replies a replica may get besides welcomes and snapshots: answers to its
/// writes in version 2's form (`WriteCodec`'s bytes, as a host writes them), aimed at the
/// writes it has in flight or just past them, accepted at odd sequences or rejected with
/// codes that make it reconnect; and errors, pongs, call answers, view lists and version-1
/// snapshot chunks, which it must take or ignore.
enum ReplyGenerator {
    /// An answer to one of the replica's latest writes (or to one it never made).
    static func writeReply(seen: SeenRequests, truth: StandInTruth, using random: inout SeededRandom) -> [UInt8] {
        let write = seen.writes.randomElement(using: &random) ?? (requestID: 0, writeID: 1)
        let requestID = random.oneIn(4) ? seen.nearRequestID(using: &random) : write.requestID
        let writeID = random.oneIn(5) ? [0, write.writeID &+ 1, UInt64.max].randomElement(using: &random)! : write.writeID
        let outcome: WriteCodec.Outcome
        if random.oneIn(2) {
            outcome = .accepted(sequence: [0, truth.sequence, truth.sequence + 1, truth.sequence + 1000, UInt64.max].randomElement(using: &random)!)
        } else {
            let codes: [Statebus_V1_ErrorCode] = [.validationFailed, .notJoined, .viewIDInUse, .typeMismatch, .persistenceFailed, .unspecified]
            let code = random.oneIn(6) ? Int.random(in: -1000...1000, using: &random) : codes.randomElement(using: &random)!.rawValue
            outcome = .rejected(
                code: code, message: ValueGenerator.string(maxBytes: 64, using: &random),
                object: FuzzObjects.objectNames.randomElement(using: &random)!,
                property: FuzzObjects.propertyNames.randomElement(using: &random)!)
        }
        let version: UInt32 = random.oneIn(10) ? [0, 1, 7].randomElement(using: &random)! : StateBusProtocol.version2
        return WriteCodec.reply(protocolVersion: version, requestID: requestID, writeID: writeID, outcome: outcome)
    }

    /// Another reply (generated code's encoding, as a host writes these).
    static func other(seen: SeenRequests, truth: StandInTruth, using random: inout SeededRandom) -> [UInt8] {
        var reply = Statebus_V1_Reply()
        reply.protocolVersion = random.oneIn(8) ? 1 : StateBusProtocol.version2
        reply.requestID = seen.nearRequestID(using: &random)
        switch Int.random(in: 0..<6, using: &random) {
        case 0:
            var error = Statebus_V1_Error()
            error.code = Statebus_V1_ErrorCode(rawValue: Int.random(in: 0...20, using: &random)) ?? .unspecified
            error.message = ValueGenerator.string(maxBytes: 128, using: &random)
            error.object = FuzzObjects.objectNames.randomElement(using: &random)!
            reply.error = error
        case 1:
            reply.pong.epoch = random.oneIn(2) ? truth.epoch : UInt64.random(in: 0...UInt64.max, using: &random)
        case 2:
            var call = Statebus_V1_CallReply()
            call.callID = UInt64.random(in: 0...8, using: &random)
            call.ok = Bool.random(using: &random)
            call.result = ValueGenerator.value(depth: 2, maxBytes: 64, using: &random)
            reply.callReply = call
        case 3:
            var views = Statebus_V1_ViewList()
            views.omitted = UInt32.random(in: 0...3, using: &random)
            reply.viewList = views
        case 4:  // version 1's snapshot, which a version-2 replica leaves alone
            var chunk = Statebus_V1_SnapshotChunk()
            chunk.object = FuzzObjects.target.name
            chunk.epoch = truth.epoch
            chunk.sequence = truth.sequence + 1
            chunk.last = true
            var property = Statebus_V1_PropertyState()
            property.name = "text"
            property.value = ValueGenerator.value(depth: 1, maxBytes: 16, using: &random)
            chunk.properties = [property]
            reply.requestID = seen.snapshot
            reply.snapshotChunk = chunk
        default:
            break  // no body
        }
        return (try? reply.serializedBytes()) ?? []
    }
}
