import Foundation
import Logging
import StateBus
import StateBusWire
import SwiftProtobuf
import ZeroMQ

/// Writes the seed corpus: real requests of both protocol versions as views encode them
/// (``CorpusRequests``), subscriptions, and the replies and publications a real `StateHost`
/// sends back, captured from its sockets: welcomes, snapshot chunks and parts, write
/// answers, runs on `u2/Target` and batches on `u/Target`, heartbeats and a join marker.
/// Each file is one `FuzzInput`, named after what it holds; the folder's old `.bin` files
/// are removed first, except the grown ones (``CorpusGrower``), which no run rewrites.
///
/// It also checks the replica target's stand-in against the host: the host's version-2
/// welcome must carry the schema hash and property tables ``FuzzObjects`` computes, or the
/// stand-in would no longer welcome a replica as a host does.
enum CorpusWriter {
    static func write(to folder: String) async throws -> Int {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for old in try FileManager.default.contentsOfDirectory(atPath: folder) where old.hasSuffix(".bin") && !old.hasPrefix(CorpusGrower.prefix) {
            try FileManager.default.removeItem(atPath: "\(folder)/\(old)")
        }
        var written = 0
        var counts: [String: Int] = [:]
        func save(_ name: String, _ input: FuzzInput, numbered: Bool = false) throws {
            var bytes: [UInt8] = []
            input.encode(into: &bytes)
            var file = name
            if numbered {
                file += "-\(counts[name, default: 0])"
                counts[name, default: 0] += 1
            }
            try Data(bytes).write(to: URL(fileURLWithPath: "\(folder)/\(file).bin"))
            written += 1
        }
        let requests = CorpusRequests.all()
        for (name, bytes) in requests {
            try save("request-\(name)", FuzzInput(channel: .request, frames: [bytes]))
        }
        let viewID = CorpusRequests.viewID
        let topics = [("updates-v1", "u/Target"), ("runs-v2", "u2/Target"), ("heartbeat", "hb"), ("join", "j/\(viewID)")]
        for (name, topic) in topics {
            try save("subscription-\(name)", FuzzInput(channel: .subscription, frames: [[1] + Array(topic.utf8) + [0]]))
        }
        try save("subscription-cancel", FuzzInput(channel: .subscription, frames: [[0] + Array("j/\(viewID)".utf8) + [0]]))

        // What a real host answers and publishes to these requests.
        let scratch = try FuzzSupport.temporaryFolder("sbfuzz-corpus")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        var quiet = Logger(label: "statebus.fuzz.corpus")
        quiet.logLevel = .critical
        let host = try await StateHost(
            objects: FuzzObjects.all,
            configuration: HostConfiguration(
                name: "corpus", controlEndpoint: "ipc://\(scratch)/control", heartbeatInterval: .milliseconds(100),
                persistence: .file("\(scratch)/state.sqlite"), logger: quiet
            ))
        defer { host.stop() }
        let context = try Context()
        let dealer = try Socket(context: context, type: .dealer)
        let subscriber = try Socket(context: context, type: .sub)
        defer {
            dealer.close()
            subscriber.close()
        }
        try dealer.connect(host.controlEndpoint)
        // The host admits only the topics it serves (manual mode): each one asked for by name.
        for (_, topic) in topics.dropLast() { try subscriber.subscribe(Array(topic.utf8) + [0]) }
        try subscriber.connect(host.updatesEndpoint)
        // The join marker says the subscriptions are live before any write is published.
        try subscriber.subscribe(Array("j/\(viewID)".utf8) + [0])
        let poller = Poller()
        _ = poller.add(subscriber, events: .readable)
        _ = poller.add(dealer, events: .readable)
        var seen: Set<String> = []
        var replies = 0
        var welcomeChecked = false
        func collect(until done: () -> Bool) throws {
            let deadline = ContinuousClock.now + .seconds(10)
            while !done() {
                guard ContinuousClock.now < deadline else {
                    throw Finding("the corpus host did not answer within 10 s (have \(seen.sorted()), \(replies) replies)")
                }
                _ = try poller.poll(timeout: .milliseconds(50))
                while let frames = try subscriber.tryReceiveMultipart() {
                    let kind = publicationKind(frames.first?.bytes ?? [])
                    seen.insert(kind)
                    try save("publication-\(kind)", FuzzInput(channel: .publication, frames: frames.map(\.bytes)), numbered: true)
                }
                while let message = try dealer.tryReceive() {
                    let reply = try Statebus_V1_Reply(serializedBytes: message.bytes, options: WireDecoding.options)
                    if case .welcome(let welcome) = reply.body, reply.protocolVersion == StateBusProtocol.version2, !welcome.objects.isEmpty {
                        try checkStandIn(against: welcome)
                        welcomeChecked = true
                    }
                    try save("reply-\(replyKind(reply))", FuzzInput(channel: .reply, frames: [message.bytes]), numbered: true)
                    replies += 1
                }
            }
        }
        try collect { seen.contains("marker") }
        // A blocking send: it returns once queued, or throws.
        for (_, bytes) in requests { try dealer.send(bytes) }
        let expectedReplies = requests.filter { !$0.name.hasSuffix("goodbye") }.count
        try collect { replies >= expectedReplies && seen.isSuperset(of: ["heartbeat", "run", "batches"]) }
        guard welcomeChecked else { throw Finding("the corpus host sent no version-2 welcome with its schema") }
        return written
    }

    /// Checks that the stand-in's version-2 welcome is the host's: the same schema hash,
    /// the same property tables.
    private static func checkStandIn(against welcome: Statebus_V1_Welcome) throws {
        let expected = FuzzObjects.all.map(\.packedSchema)
        guard welcome.objects == expected, welcome.schemaHash == FuzzObjects.schemaHash(of: FuzzObjects.all) else {
            throw Finding(
                "the host's version-2 welcome no longer matches the fuzzer's stand-in (built from ObjectDefinition.packedSchema and schemaHash(of:) over FuzzObjects.all, in order): hash \(welcome.schemaHash) vs \(FuzzObjects.schemaHash(of: FuzzObjects.all)), objects \(welcome.objects) vs \(expected)"
            )
        }
    }

    private static func publicationKind(_ topic: [UInt8]) -> String {
        if topic.starts(with: Array("u2/".utf8)) { return "run" }
        if topic.starts(with: Array("u/".utf8)) { return "batches" }
        if topic.starts(with: Array("hb".utf8)) { return "heartbeat" }
        return "marker"
    }

    private static func replyKind(_ reply: Statebus_V1_Reply) -> String {
        let version = "v\(reply.protocolVersion)"
        switch reply.body {
        case .welcome(let welcome): return "\(version)-welcome\(welcome.objects.isEmpty ? "-no-schema" : "")"
        case .snapshotChunk: return "\(version)-snapshot-chunk"
        case .snapshotPart: return "\(version)-snapshot-part"
        case .writeReply(let write): return "\(version)-write-\(write.accepted ? "accepted" : "rejected")"
        case .error: return "\(version)-error"
        case .pong: return "\(version)-pong"
        case .callReply: return "\(version)-call"
        case .viewList: return "\(version)-views"
        case nil: return "\(version)-empty"
        }
    }
}
