import Foundation
import StateBusWire
import SwiftProtobuf

/// The replica side's stand-in host: answers a replica's requests as a version-2
/// `StateHost` does, from ``StandInTruth``: a hello with a welcome (the schema left out for
/// a hello that holds the truth's hash), a snapshot request with `SnapshotPart`s, a write
/// with `WriteCodec`'s answer and then the run that carries it, a ping with a pong; and a
/// join subscription with its marker. A pure value: the sockets stay in ``ReplicaTarget``.
///
/// What the replica sends must be what a version-2 view sends: a request that is not one,
/// is not version 2, or names another view, and a subscription to version 1's updates, are
/// findings.
struct StandInHost {
    /// Something to send in answer.
    enum Output {
        /// A reply on the control socket.
        case reply([UInt8])
        /// A publication on the updates socket.
        case publication(topic: [UInt8], body: [UInt8])
    }

    var truth: StandInTruth
    var seen = SeenRequests()
    /// The stand-in's updates endpoint, which its welcome announces.
    let endpoint: String
    /// The replica's view id.
    let viewID: String
    /// About the largest snapshot part in bytes: small, so that snapshots come in parts.
    let partLimit: Int
    /// Set when a fuzz input may have left the replica another schema under the truth's
    /// hash (``WelcomeGenerator/mayMislead(_:truth:)``): until a check passes, every welcome
    /// carries the schema.
    var schemaSuspect = false
    /// The answer to each write id, as a host's write ledger keeps it: a write sent again
    /// (after a reconnection) gets its first answer and is not applied twice.
    private var answers: [UInt64: WriteCodec.Outcome] = [:]
    private(set) var served: [String: Int] = [:]
    /// Whether answers to hellos and snapshot requests may be held back (not during a check).
    var mayHold = true
    /// The answer to a hello or snapshot request held back for a few inputs, so that the
    /// fuzzer's replies to the same request get there first: a replica takes a welcome only
    /// while it waits for one, and snapshot parts only while it waits for its snapshot.
    private var held: (request: HeldRequest, outputs: [Output], inputsLeft: Int)?

    /// A request whose answer is held back.
    enum HeldRequest {
        case hello
        case snapshot
    }

    /// The request whose answer is held back, if any.
    var holding: HeldRequest? { held?.request }

    init(truth: StandInTruth, endpoint: String, viewID: String, partLimit: Int) {
        self.truth = truth
        self.endpoint = endpoint
        self.viewID = viewID
        self.partLimit = partLimit
    }

    /// The answers to one request frame.
    /// - Throws: ``Finding`` when the frame is not a version-2 request of this replica.
    mutating func answer(_ frame: [UInt8]) throws -> [Output] {
        if let write = frame.withUnsafeBytes(WriteCodec.decodeWrite) {
            return try answer(write)
        }
        guard let request = try? Statebus_V1_Request(serializedBytes: frame, options: WireDecoding.options) else {
            throw Finding("the replica sent a request that is not a Request: \(frame.prefix(64))")
        }
        guard request.protocolVersion == StateBusProtocol.version2 else {
            throw Finding("the replica sent a version-\(request.protocolVersion) request; it speaks version 2")
        }
        switch request.body {
        case .hello(let hello):
            guard hello.viewID == viewID else { throw Finding("the replica said hello as '\(hello.viewID)', not as its view id '\(viewID)'") }
            seen.hello = request.requestID
            let withSchema = schemaSuspect || hello.schemaHash != truth.schemaHash
            served[withSchema ? "welcome" : "welcome.noschema", default: 0] += 1
            let welcome = WelcomeGenerator.reply(truth: truth, requestID: request.requestID, endpoint: endpoint, withSchema: withSchema)
            return hold(.hello, [.reply(welcome)], requestID: request.requestID)
        case .snapshot(let snapshot):
            seen.snapshot = request.requestID
            guard snapshot.object == FuzzObjects.target.name else {
                throw Finding("the replica of \(FuzzObjects.target.name) asked for a snapshot of '\(snapshot.object)'")
            }
            served["snapshot", default: 0] += 1
            let parts = SnapshotGenerator.parts(truth: truth, requestID: request.requestID, limit: partLimit)
            return hold(.snapshot, parts.map { .reply($0) }, requestID: request.requestID)
        case .write(let write):
            // A write the fast decoder did not take, as a host takes it too.
            return try answer(
                WireWrite(
                    protocolVersion: request.protocolVersion, requestID: request.requestID, object: write.object, writeID: write.writeID,
                    viewID: write.viewID, changes: write.changes.map(PropertyChange.init(wire:))))
        case .ping:
            served["pong", default: 0] += 1
            var reply = Statebus_V1_Reply()
            reply.protocolVersion = StateBusProtocol.version2
            reply.requestID = request.requestID
            reply.pong.epoch = truth.epoch
            return [.reply(try reply.serializedBytes())]
        default:
            served["other", default: 0] += 1
            return []
        }
    }

    /// Holds `outputs` back for 1 to 40 inputs, for two requests in three (by request id,
    /// so a replay holds the same ones), when nothing else is held; or returns them.
    private mutating func hold(_ request: HeldRequest, _ outputs: [Output], requestID: UInt64) -> [Output] {
        guard mayHold, held == nil, requestID % 3 != 0 else { return outputs }
        held = (request, outputs, 1 + Int(requestID % 40))
        served["held", default: 0] += 1
        return []
    }

    /// Counts one input sent; returns the held answers once their time has come (at once
    /// when holding is off).
    mutating func tick() -> [Output] {
        guard var waiting = held else { return [] }
        waiting.inputsLeft -= 1
        guard waiting.inputsLeft <= 0 || !mayHold else {
            held = waiting
            return []
        }
        held = nil
        return waiting.outputs
    }

    /// Answers a write: refused when a change names no property of `Target` or does not
    /// apply to its value, or (one in five, by write id) as a validator would; otherwise
    /// applied at the next sequence, answered, and published as a run from this view.
    private mutating func answer(_ write: WireWrite) throws -> [Output] {
        guard write.protocolVersion == StateBusProtocol.version2 else {
            throw Finding("the replica sent a version-\(write.protocolVersion) write; it speaks version 2")
        }
        guard write.viewID == viewID, write.object == FuzzObjects.target.name else {
            throw Finding("the replica sent a write of '\(write.object)' as '\(write.viewID)'")
        }
        seen.noteWrite(requestID: write.requestID, writeID: write.writeID)
        func reply(_ outcome: WriteCodec.Outcome) -> Output {
            .reply(WriteCodec.reply(protocolVersion: StateBusProtocol.version2, requestID: write.requestID, writeID: write.writeID, outcome: outcome))
        }
        if let earlier = answers[write.writeID] {
            served["write.again", default: 0] += 1
            return [reply(earlier)]
        }
        var changes: [IndexedChange] = []
        var refusal: (code: Statebus_V1_ErrorCode, property: String)?
        for change in write.changes {
            guard let index = StandInTruth.names.firstIndex(of: change.property) else {
                refusal = (.unknownProperty, change.property)
                break
            }
            let indexed = IndexedChange(
                property: index, path: change.path, value: change.value, operation: change.operation, position: change.position)
            if !indexed.replacesWholeValue,
                (try? truth.values[index].applying(change.operation, change.value, at: change.path, position: change.position)) == nil
            {
                refusal = (.invalidPath, change.property)
                break
            }
            changes.append(indexed)
        }
        if refusal == nil, write.writeID % 5 == 0 { refusal = (.validationFailed, write.changes.first?.property ?? "") }
        if let refusal {
            let outcome = WriteCodec.Outcome.rejected(
                code: refusal.code.rawValue, message: "the stand-in refuses it", object: write.object, property: refusal.property)
            answers[write.writeID] = outcome
            served["write.rejected", default: 0] += 1
            return [reply(outcome)]
        }
        truth.sequence += 1
        for change in changes { truth.apply(change, at: truth.sequence) }
        let outcome = WriteCodec.Outcome.accepted(sequence: truth.sequence)
        answers[write.writeID] = outcome
        served["write.accepted", default: 0] += 1
        let run = RunGenerator.encode(
            [GeneratedBatch(origin: viewID, writeID: write.writeID, changes: changes)], object: truth.targetIndex, epoch: truth.epoch,
            firstSequence: truth.sequence)
        return [reply(outcome), .publication(topic: RunGenerator.topic, body: run)]
    }

    /// The answer to one message of the replica's subscription socket: a join marker for its
    /// join subscription.
    /// - Throws: ``Finding`` for a subscription to version 1's updates.
    mutating func subscription(_ message: [UInt8]) throws -> Output? {
        guard message.first == 1 else { return nil }
        let topic = Array(message.dropFirst())
        if topic.starts(with: Array("u/".utf8)) {
            throw Finding("the version-2 replica subscribed to version 1's updates (\(String(decoding: topic, as: UTF8.self)))")
        }
        guard topic.starts(with: Array("j/".utf8)), topic.count > 3 else { return nil }
        var publication = Statebus_V1_Publication()
        publication.protocolVersion = StateBusProtocol.version1  // as a host writes markers, for views of both versions
        publication.joinMarker.viewID = String(decoding: topic.dropFirst(2).dropLast(), as: UTF8.self)
        publication.joinMarker.epoch = truth.epoch
        served["marker", default: 0] += 1
        return .publication(topic: topic, body: try publication.serializedBytes())
    }

    /// A heartbeat as a host publishes it: the epoch and each object's sequence.
    func heartbeat() throws -> [UInt8] {
        var publication = Statebus_V1_Publication()
        publication.protocolVersion = StateBusProtocol.version1
        publication.heartbeat.epoch = truth.epoch
        publication.heartbeat.sequences = truth.objects.map { object in
            var sequence = Statebus_V1_ObjectSequence()
            sequence.object = object.name
            sequence.sequence = object.name == FuzzObjects.target.name ? truth.sequence : 0
            return sequence
        }
        return try publication.serializedBytes()
    }
}
