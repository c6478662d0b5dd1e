import Foundation
import StateBusTesting
import StateBusWire
import SwiftProtobuf
import Testing
import ZeroMQ

/// `statebus host` serving several objects from the command line, each `--property`
/// belonging to the `--object` before it, with real processes; and a foreign client (raw
/// ZeroMQ and protobuf, version 2) joining an object at index 1 and an object without
/// properties.
@Suite("statebus host with several --object declarations")
struct MultiObjectHostTests {
    static let declarations = [
        "--object", "A", "--property", "x:int=1", "--property", "data:any", "--object=B", "--property=y:int=2", "--object", "Empty"
    ]

    /// Starts `statebus host` with ``declarations`` on an ipc endpoint in a new folder and
    /// waits until it serves.
    /// - Returns: the folder (for the caller to remove), the control endpoint and the host.
    static func startHost() async throws -> (folder: String, control: String, host: NodeProcess) {
        let folder = "/tmp/sbmulti-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let control = "ipc://\(folder)/control"
        let host = try NodeProcess(
            executable: try BuiltProducts.executable("statebus"),
            arguments: ["host", "--control", control, "--no-persistence", "--heartbeat-ms", "200"] + declarations, name: "host")
        do {
            try await host.waitForLine("the host ready") { $0.hasPrefix("ready ") }
        } catch {
            host.terminate()
            throw error
        }
        return (folder, control, host)
    }

    @Test("each --property belongs to the --object before it; get, set and objects see A, B and the empty object apart")
    func servesEachObject() async throws {
        let (folder, control, host) = try await Self.startHost()
        defer {
            host.terminate()
            try? FileManager.default.removeItem(atPath: folder)
        }

        let x = try await runStatebus(["get", "--control", control, "--object", "A", "x"])
        #expect(x.status == 0 && x.output.last == "1", "\(x.output)")
        let y = try await runStatebus(["get", "--control", control, "--object", "B", "y"])
        #expect(y.status == 0 && y.output.last == "2", "\(y.output)")
        // Never one object holding both (what the command did when it served one object).
        let crossed = try await runStatebus(["get", "--control", control, "--object", "B", "x"])
        #expect(crossed.status != 0, "B has no x: \(crossed.output)")
        let set = try await runStatebus(["set", "--control", control, "--object", "B", "y", "5"])
        #expect(set.status == 0, "\(set.output)")
        let changed = try await runStatebus(["get", "--control", control, "--object", "B", "y"])
        #expect(changed.output.last == "5", "\(changed.output)")

        let objects = try await runStatebus(["objects", "--control", control])
        #expect(objects.status == 0, "\(objects.output)")
        let listing = objects.output.drop { !$0.hasPrefix("host ") }.dropFirst()
        #expect(Self.sections(listing) == Self.expected, "\(objects.output)")
    }

    /// The listing as object name → its property lines, whatever their order.
    static func sections(_ lines: some Sequence<String>) -> [String: Set<String>] {
        var sections: [String: Set<String>] = [:]
        var current = ""
        for line in lines {
            if line.hasPrefix("  ") {
                sections[current, default: []].insert(line.trimmingCharacters(in: .whitespaces))
            } else {
                current = line
                sections[current] = sections[current] ?? []
            }
        }
        return sections
    }

    static let expected: [String: Set<String>] = ["A": ["x: int", "data: any"], "B": ["y: int"], "Empty": []]

    @Test(
        "refused with what to do: a --property before any --object, an object twice, nothing to serve, an --object without a name, an unknown option"
    )
    func refusals() async throws {
        let cases: [(arguments: [String], message: String)] = [
            (["--property", "x:int=1", "--object", "A"], "--property 'x:int=1' comes before any --object"),
            (["--object", "A", "--property", "x:int=1", "--object", "A", "--property", "y:int=2"], "--object 'A' is declared twice"),
            ([], "declare at least one object"),
            (["--object", "A", "--property", "x:int=1", "--object"], "--object needs a name"),
            (["--object", "A", "--objekt", "B"], "unknown option '--objekt'"),
            (["--object", "A", "--property", "x:integer"], "unknown kind 'integer'")
        ]
        for (arguments, message) in cases {
            // No object injected: the launcher's variable set empty.
            let run = try await OneShotCommand.run(
                try BuiltProducts.executable("statebus"), ["host", "--control", "ipc:///tmp/sbmulti-never/control"] + arguments,
                environment: ["STATEBUS_OBJECT": ""])
            #expect(run.status == 64, "\(arguments): exit \(run.status), \(run.output)")
            #expect(run.output.contains { $0.contains(message) }, "\(arguments): \(run.output)")
        }
    }

    @Test("a raw version-2 client joins object 1 and an object without properties: one empty part, runs of index 1; the any property is optional")
    func rawClientAtIndexOne() async throws {
        let (folder, control, host) = try await Self.startHost()
        defer {
            host.terminate()
            try? FileManager.default.removeItem(atPath: folder)
        }

        let context = try Context()
        let client = try RawVersion2Client(context: context, control: control)
        let welcome = try client.hello(viewID: "raw-multi")
        try #require(welcome.objects.map(\.name) == ["A", "B", "Empty"])
        // The flags of A's properties: x is a plain int (writable), data takes any value, null too.
        let table = welcome.objects[0].propertyTable
        #expect(table.names == ["x", "data"])
        #expect(table.flags == [1, 1 | 4], "flags \(table.flags)")
        #expect(welcome.objects[2].propertyTable.names.isEmpty)

        try client.subscribe(updates: welcome.updatesEndpoint, objects: ["B", "Empty"], viewID: "raw-multi")
        let parts = try client.snapshot(of: "B")
        #expect(parts.count == 1 && parts[0].object == 1 && parts[0].last && parts[0].cells == [0 << 3 | 0] && parts[0].ints == [2], "\(parts)")
        let empty = try client.snapshot(of: "Empty")
        #expect(empty.count == 1, "\(empty)")
        #expect(empty.first.map { $0.object == 2 && $0.last && $0.part == 0 && $0.cells.isEmpty && $0.versions.isEmpty } == true, "\(empty)")

        let answer = try client.write(object: "B", property: "y", value: 9, writeID: 1, viewID: "raw-multi")
        #expect(answer.accepted && answer.sequence == 1, "\(answer)")
        let run = try client.nextRun()
        #expect(run.object == 1 && run.firstSequence == 1 && run.cells == [0 << 3 | 0] && run.ints == [9], "\(run)")
        #expect(run.origins == ["raw-multi"] && run.writeIds == [1])
    }
}

/// A foreign version-2 client: a DEALER for requests and a SUB for publications, spoken
/// with the generated messages only, as PROTOCOL.md section 18 describes.
private final class RawVersion2Client {
    let control: Socket
    private var sub: Socket?
    private let context: Context
    private var requestID: UInt64 = 0

    init(context: Context, control endpoint: String) throws {
        self.context = context
        control = try Socket(context: context, type: .dealer)
        try control.connect(endpoint)
    }

    deinit {
        control.close()
        sub?.close()
    }

    func hello(viewID: String) throws -> Statebus_V1_Welcome {
        var hello = Statebus_V1_Hello()
        hello.viewID = viewID
        guard case .welcome(let welcome) = try ask(.hello(hello)).body else { throw RawClientError("no welcome") }
        return welcome
    }

    /// Subscribes to the objects' run topics and the heartbeat, then the join topic, and
    /// waits for the join marker.
    func subscribe(updates: String, objects: [String], viewID: String) throws {
        let socket = try Socket(context: context, type: .sub)
        sub = socket
        for object in objects { try socket.subscribe(Array("u2/\(object)".utf8) + [0]) }
        try socket.subscribe(Array("hb".utf8) + [0])
        try socket.subscribe(Array("j/\(viewID)".utf8) + [0])
        try socket.connect(updates)
        while true {
            let publication = try nextPublication()
            if publication.hasJoinMarker, publication.joinMarker.viewID == viewID { return }
        }
    }

    func snapshot(of object: String) throws -> [Statebus_V1_SnapshotPart] {
        var request = Statebus_V1_SnapshotRequest()
        request.object = object
        var parts: [Statebus_V1_SnapshotPart] = []
        var reply = try ask(.snapshot(request))
        while true {
            guard case .snapshotPart(let part) = reply.body else { throw RawClientError("not a snapshot part: \(reply)") }
            parts.append(part)
            if part.last { return parts }
            reply = try receiveReply()
        }
    }

    func write(object: String, property: String, value: Int64, writeID: UInt64, viewID: String) throws -> Statebus_V1_WriteReply {
        var write = Statebus_V1_WriteRequest()
        write.object = object
        write.writeID = writeID
        write.viewID = viewID
        var change = Statebus_V1_Change()
        change.property = property
        change.value.intValue = value
        write.changes = [change]
        guard case .writeReply(let answer) = try ask(.write(write)).body else { throw RawClientError("no write reply") }
        return answer
    }

    /// The next run on the subscribed topics (heartbeats skipped).
    func nextRun() throws -> Statebus_V1_UpdateRun {
        while true {
            let publication = try nextPublication()
            if publication.hasRun { return publication.run }
        }
    }

    private func ask(_ body: Statebus_V1_Request.OneOf_Body) throws -> Statebus_V1_Reply {
        requestID += 1
        var request = Statebus_V1_Request()
        request.protocolVersion = StateBusProtocol.version2
        request.requestID = requestID
        request.body = body
        try control.send(try request.serializedBytes() as [UInt8])
        return try receiveReply()
    }

    private func receiveReply() throws -> Statebus_V1_Reply {
        let poller = Poller()
        poller.add(control, events: .readable)
        guard try !poller.poll(timeout: .seconds(20)).isEmpty, let message = try control.tryReceive() else {
            throw RawClientError("no reply within 20 s")
        }
        return try Statebus_V1_Reply(serializedBytes: message.bytes)
    }

    private func nextPublication() throws -> Statebus_V1_Publication {
        guard let sub else { throw RawClientError("not subscribed") }
        let poller = Poller()
        poller.add(sub, events: .readable)
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            guard try !poller.poll(timeout: .milliseconds(100)).isEmpty, let frames = try sub.tryReceiveMultipart(), frames.count == 2 else {
                continue
            }
            return try Statebus_V1_Publication(serializedBytes: frames[1].bytes)
        }
        throw RawClientError("no publication within 20 s")
    }
}

/// What went wrong in a raw client's exchange.
private struct RawClientError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
