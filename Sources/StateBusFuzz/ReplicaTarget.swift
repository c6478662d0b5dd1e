import Foundation
import Logging
import StateBus
import StateBusWire
import SwiftProtobuf
import ZeroMQ

/// Fuzzes a real `Replica` through a stand-in host: a ROUTER that answers hello (with a
/// welcome naming its XPUB) and snapshots from `truth`, and an XPUB that publishes join
/// markers, valid batches and the fuzzer's publications.
///
/// The check: a heartbeat of a new epoch must bring the replica, whatever garbage it took,
/// back to the stand-in's truth (hello, join, snapshot) within a deadline.
final class ReplicaTarget {
    let folder: String
    private let context: Context
    private let control: Socket
    private let updates: Socket
    private let replica: Replica
    private let generator: PublicationGenerator
    private var truth: StandInTruth
    private var replicaIdentity: [UInt8]?
    private(set) var served: [String: Int] = [:]
    /// Inputs and answers the stand-in's sockets would not take at once (a full queue):
    /// dropped, as on a lossy link, and reported with the run's figures.
    private(set) var unsent = 0

    init(corpus: [FuzzInput], using random: inout SeededRandom) throws {
        folder = try FuzzSupport.temporaryFolder("sbfuzz-replica")
        context = try Context()
        control = try Socket(context: context, type: .router)
        updates = try Socket(context: context, type: .xpub)
        try control.set(.linger, 0)
        try updates.set(.linger, 0)
        try updates.set(.xpubVerbose, true)
        try updates.set(.sendHighWaterMark, 100_000)
        _ = try control.bind("ipc://\(folder)/control")
        _ = try updates.bind("ipc://\(folder)/updates")
        truth = StandInTruth(epoch: UInt64.random(in: 1...UInt64.max, using: &random), values: FuzzObjects.target.defaultValues.mapValues(\.wire))
        var configuration = ReplicaConfiguration(nodeName: "fuzz-replica", requestTimeout: .milliseconds(500))
        configuration.logger.logLevel = .critical
        let replica = try Replica(object: "Target", controlEndpoint: "ipc://\(folder)/control", configuration: configuration)
        self.replica = replica
        generator = PublicationGenerator(corpus: corpus, viewID: replica.viewID)
    }

    /// The next generated input (it may move the truth on).
    func generate(using random: inout SeededRandom) -> FuzzInput {
        generator.next(truth: &truth, using: &random)
    }

    /// Sends one input, then serves whatever the replica asked.
    func send(_ input: FuzzInput) throws {
        // Fuzz inputs the sockets will not take are dropped on purpose, as on a lossy link
        // (counted in `unsent`): the harness tests what the replica makes of what arrives.
        switch input.channel {
        case .publication where !input.frames.isEmpty:
            count(try updates.send(multipart: input.frames, wait: false))
        case .reply where !input.frames.isEmpty:
            if let replicaIdentity { count(try control.send(multipart: [replicaIdentity] + input.frames, wait: false)) }
        default:
            break
        }
        try serve(timeout: nil)
    }

    /// Counts a send the socket did not take.
    private func count(_ sent: Bool) {
        if !sent { unsent += 1 }
    }

    /// Answers hello and snapshot requests and join subscriptions, as a host would.
    private func serve(timeout: Duration?) throws {
        if let timeout {
            let poller = Poller()
            _ = poller.add(control, events: .readable)
            _ = poller.add(updates, events: .readable)
            _ = try poller.poll(timeout: timeout)
        }
        while let frames = try control.tryReceiveMultipart() {
            guard frames.count == 2, let request = try? Statebus_V1_Request(serializedBytes: frames[1].bytes) else {
                throw Finding("the replica sent a request that is not one frame of a Request")
            }
            replicaIdentity = frames[0].bytes
            var reply = Statebus_V1_Reply()
            reply.protocolVersion = StateBusProtocol.version
            reply.requestID = request.requestID
            switch request.body {
            case .hello:
                reply.welcome.epoch = truth.epoch
                reply.welcome.updatesEndpoint = "ipc://\(folder)/updates"
                reply.welcome.hostName = "stand-in"
                reply.welcome.objects = [FuzzObjects.schema(of: FuzzObjects.target)]
                reply.welcome.maxMessageBytes = 4 << 20
            case .snapshot:
                reply.snapshotChunk.object = "Target"
                reply.snapshotChunk.epoch = truth.epoch
                reply.snapshotChunk.sequence = truth.sequence
                reply.snapshotChunk.last = true
                reply.snapshotChunk.properties = FuzzObjects.target.properties.map { property in
                    var state = Statebus_V1_PropertyState()
                    state.name = property.name
                    state.value = truth.values[property.name] ?? Statebus_V1_Value()
                    return state
                }
            default:
                served["other", default: 0] += 1
                continue
            }
            served[reply.welcome.epoch != 0 ? "welcome" : "snapshot", default: 0] += 1
            count(try control.send(multipart: [frames[0].bytes, try reply.serializedBytes()], wait: false))
        }
        while let message = try updates.tryReceive() {
            let bytes = message.bytes
            guard bytes.first == 1, bytes.count > 3, bytes[1...2] == [0x6A, 0x2F] else { continue }  // 0x01 "j/"
            var publication = Statebus_V1_Publication()
            publication.protocolVersion = StateBusProtocol.version
            publication.joinMarker.viewID = String(decoding: bytes.dropFirst(3).dropLast(), as: UTF8.self)
            publication.joinMarker.epoch = truth.epoch
            count(try updates.send(multipart: [Array(bytes.dropFirst()), try publication.serializedBytes()], wait: false))
            served["marker", default: 0] += 1
        }
    }

    /// A new epoch, announced by heartbeat (again every 200 ms, in case the replica is
    /// between subscriptions): the replica must come back live with exactly the truth.
    func check(using random: inout SeededRandom) throws {
        truth.epoch = UInt64.random(in: 1...UInt64.max, using: &random)
        let expected = truth.values.mapValues(Value.init(wire:))
        let deadline = ContinuousClock.now + .seconds(10)
        var nextHeartbeat = ContinuousClock.now
        while ContinuousClock.now < deadline {
            if ContinuousClock.now >= nextHeartbeat {
                var publication = Statebus_V1_Publication()
                publication.protocolVersion = StateBusProtocol.version
                publication.heartbeat.epoch = truth.epoch
                count(try updates.send(multipart: [Array("hb".utf8) + [0], try publication.serializedBytes()], wait: false))
                nextHeartbeat = ContinuousClock.now + .milliseconds(200)
            }
            try serve(timeout: .milliseconds(20))
            let state = replica.consistentState
            if state.epoch == truth.epoch, state.connection == .live, state.sequence == truth.sequence, FuzzSupport.same(state.values, expected) {
                return
            }
        }
        let state = replica.consistentState
        throw Finding(
            "the replica did not resync within 10 s: epoch \(state.epoch == truth.epoch ? "new" : "old"), \(state.connection), sequence \(state.sequence) vs \(truth.sequence); differs in \(FuzzSupport.differences(state.values, expected))"
        )
    }

    func close() {
        replica.close()
        control.close()
        updates.close()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
