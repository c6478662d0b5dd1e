import Foundation
import Logging
import StateBus
import StateBusWire
import SwiftProtobuf
import ZeroMQ

/// Writes the seed corpus: real requests as a view encodes them, and the replies and
/// publications a real `StateHost` sends back, captured from its sockets. Each file is one
/// `FuzzInput`.
enum CorpusWriter {
    static func write(to folder: String) async throws -> Int {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var written = 0
        func save(_ name: String, _ input: FuzzInput) throws {
            var bytes: [UInt8] = []
            input.encode(into: &bytes)
            try Data(bytes).write(to: URL(fileURLWithPath: "\(folder)/\(name).bin"))
            written += 1
        }
        let requests = Self.requests()
        for (name, request) in requests {
            try save("request-\(name)", FuzzInput(channel: .request, frames: [try request.serializedBytes()]))
        }
        let viewID = "7F3A9C2E-0B1D-4E5F-8A6B-1C2D3E4F5A6B"
        for (name, topic) in [("updates", "u/Target"), ("heartbeat", "hb"), ("join", "j/\(viewID)")] {
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
        try subscriber.subscribe([UInt8]())
        try subscriber.connect(host.updatesEndpoint)
        // The join marker says the subscription is live before any write is published.
        try subscriber.subscribe(Array("j/\(viewID)".utf8) + [0])
        let poller = Poller()
        _ = poller.add(subscriber, events: .readable)
        _ = poller.add(dealer, events: .readable)
        var publications = 0
        var replies = 0
        var sawMarker = false
        var sawHeartbeat = false
        func collect(until done: () -> Bool) throws {
            let deadline = ContinuousClock.now + .seconds(10)
            while !done() {
                guard ContinuousClock.now < deadline else { throw Finding("the corpus host did not answer within 10 s") }
                _ = try poller.poll(timeout: .milliseconds(50))
                while let frames = try subscriber.tryReceiveMultipart() {
                    sawMarker = sawMarker || frames.first?.bytes.first == 0x6A
                    sawHeartbeat = sawHeartbeat || frames.first?.bytes.first == 0x68
                    try save("publication-\(publications)", FuzzInput(channel: .publication, frames: frames.map(\.bytes)))
                    publications += 1
                }
                while let message = try dealer.tryReceive() {
                    try save("reply-\(replies)", FuzzInput(channel: .reply, frames: [message.bytes]))
                    replies += 1
                }
            }
        }
        try collect { sawMarker }
        // A blocking send: it returns once queued, or throws.
        for (_, request) in requests { try dealer.send(try request.serializedBytes() as [UInt8]) }
        let expectedReplies = requests.count - requests.filter { $0.1.goodbye.viewID != "" }.count
        try collect { replies >= expectedReplies && sawHeartbeat }
        return written
    }

    /// Requests as a Swift view makes them: hello, snapshot, ping, goodbye, and writes of
    /// every kind (whole values, paths into maps and lists, compare-and-set, several changes).
    static func requests() -> [(String, Statebus_V1_Request)] {
        func request(_ id: UInt64, _ body: Statebus_V1_Request.OneOf_Body) -> Statebus_V1_Request {
            var request = Statebus_V1_Request()
            request.protocolVersion = StateBusProtocol.version
            request.requestID = id
            request.body = body
            return request
        }
        func write(_ id: UInt64, _ changes: [(String, ValuePath, Value, UInt64?)]) -> Statebus_V1_Request {
            var write = Statebus_V1_WriteRequest()
            write.object = "Target"
            write.writeID = id
            write.viewID = "7F3A9C2E-0B1D-4E5F-8A6B-1C2D3E4F5A6B"
            write.changes = changes.map { property, path, value, expected in
                var change = Statebus_V1_Change()
                change.property = property
                change.path = path.wire
                change.value = value.wire
                if let expected { change.expectedVersion = expected }
                return change
            }
            return request(100 + id, .write(write))
        }
        var hello = Statebus_V1_Hello()
        hello.viewID = "7F3A9C2E-0B1D-4E5F-8A6B-1C2D3E4F5A6B"
        hello.nodeName = "notes"
        hello.objects = ["Target"]
        var snapshot = Statebus_V1_SnapshotRequest()
        snapshot.object = "Target"
        var sentinel = snapshot
        sentinel.object = "Sentinel"
        var goodbye = Statebus_V1_Goodbye()
        goodbye.viewID = hello.viewID
        let user: Value = .map(["name": "bo", "email": "bo@example.com", "tags": .list([.string("x")])])
        return [
            ("hello", request(1, .hello(hello))),
            ("snapshot", request(2, .snapshot(snapshot))),
            ("snapshot-sentinel", request(3, .snapshot(sentinel))),
            ("ping", request(4, .ping(Statebus_V1_Ping()))),
            ("write-text", write(1, [("text", .root, "hi", nil)])),
            ("write-count", write(2, [("count", .root, .int(7), nil)])),
            ("write-ratio", write(3, [("ratio", .root, .double(1.5), nil)])),
            ("write-flag", write(4, [("flag", .root, .bool(true), nil)])),
            ("write-user", write(5, [("user", .root, user, nil)])),
            ("write-user-email", write(6, [("user", ValuePath([.key("email")]), "c@example.com", nil)])),
            ("write-user-tag", write(7, [("user", ValuePath([.key("tags"), .index(0)]), "y", nil)])),
            ("write-any", write(8, [("any", .root, .list([.null, .bytes(Data([0, 1])), .map(["k": .double(2)])]), nil)])),
            ("write-durable", write(9, [("durable", .root, .int(3), nil)])),
            ("write-cas", write(10, [("count", .root, .int(8), 2)])),
            ("write-several", write(11, [("text", .root, "both", nil), ("count", .root, .int(9), nil)])),
            (
                "write-sentinel",
                {
                    var request = write(12, [("secret", .root, "mine", nil)])
                    request.write.object = "Sentinel"
                    return request
                }()
            ),
            ("goodbye", request(5, .goodbye(goodbye)))
        ]
    }
}
