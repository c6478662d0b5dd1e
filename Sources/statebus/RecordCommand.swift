import ArgumentParser
import Foundation
import StateBus
import StateBusCommandLine
import StateBusWire
import SwiftProtobuf
import Synchronization
import ZeroMQ

/// `statebus record`: writes one object's welcome, snapshot and every publication, with
/// their times, to a file that `statebus replay` serves as a host.
struct RecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record one object's history (welcome, snapshot, every publication) to a file, until stopped.",
        discussion: """
            Joins the host as a view would (hello, subscription, join marker, snapshot) and \\
            appends every publication of the object to FILE with its time, until SIGINT or \\
            SIGTERM. Prints "recording object=… sequence=…" once the snapshot is in, and \\
            "recorded N publications, sequence A to B" at the end. A gap (this process too \\
            slow for the host) is recorded as a new snapshot. The format is documented in \\
            proto/PROTOCOL.md, "Recordings". Replay it with `statebus replay FILE`.

            Examples:
              statebus record --control ipc:///tmp/demo/profile --object Profile --out profile.rec
              statebus record --object TodoList --out todo.rec    # STATEBUS_CONTROL from the environment
            """
    )

    @Option(name: .long, help: "The host's control endpoint (default: $STATEBUS_CONTROL).")
    var control: String?

    @Option(name: .long, help: "The object to record.")
    var object: String

    @Option(name: .long, help: "The file to write (replaced).")
    var out: String

    @Option(name: .long, help: "Seconds to wait for the host's welcome and snapshot (default: $STATEBUS_TIMEOUT, else 10).")
    var timeout: Double?

    private var hostWait: RequestedWait { RequestedWait(option: timeout, default: 10) }

    func validate() throws { try hostWait.validate() }

    func run() async throws {
        guard let control = control ?? ProcessInfo.processInfo.environment[EnvironmentVariableName.control] else {
            throw ValidationError("no endpoint: pass --control ENDPOINT or set STATEBUS_CONTROL")
        }
        let stop = SignalTrap.stopSignals()
        let stopped = Stop()
        Task {
            await stop.wait()
            stopped.set()
        }
        let (object, out, wait) = (object, out, hostWait.duration)
        // Polls block: on a thread of their own, not the cooperative pool's.
        let summary = try await Task.detached {
            try RecordingSession(control: control, object: object, out: out, timeout: wait).run(until: stopped)
        }.value
        emit(summary)
    }
}

/// A flag set once, read from the recording loop.
final class Stop: Sendable {
    private let flag = Atomic<Bool>(false)
    func set() { flag.store(true, ordering: .relaxed) }
    var isSet: Bool { flag.load(ordering: .relaxed) }
}

/// The recording loop: one DEALER and one SUB, polled on the calling thread.
final class RecordingSession {
    let control: String
    let object: String
    let timeout: Duration
    let context: Context
    let dealer: Socket
    let writer: Recording.Writer
    let viewID = "recorder-\(UUID().uuidString)"
    private var nextRequestID: UInt64 = 1

    init(control: String, object: String, out: String, timeout: Duration) throws {
        self.control = control
        self.object = object
        self.timeout = timeout
        context = try Context()
        dealer = try Socket(context: context, type: .dealer)
        try dealer.connect(control)
        writer = try Recording.Writer(
            path: out,
            header: Recording.Header(
                format: Recording.format, version: Recording.version, object: object, control: control,
                started: ISO8601DateFormatter().string(from: Date())))
    }

    private func send(_ body: Statebus_V1_Request.OneOf_Body) throws -> UInt64 {
        var request = Statebus_V1_Request()
        // Version 1: its messages name every object and property, so a recording reads on
        // its own, without the welcome's indexes (PROTOCOL.md, "Recordings").
        request.protocolVersion = StateBusProtocol.version1
        request.requestID = nextRequestID
        nextRequestID += 1
        request.body = body
        try dealer.send(try request.serializedBytes() as [UInt8])
        return request.requestID
    }

    /// The next reply, or `nil` at the deadline.
    private func reply(until deadline: ContinuousClock.Instant) throws -> Statebus_V1_Reply? {
        let poller = Poller()
        poller.add(dealer, events: .readable)
        while ContinuousClock.now < deadline {
            guard try !poller.poll(timeout: .milliseconds(50)).isEmpty, let message = try dealer.tryReceive() else { continue }
            return try Statebus_V1_Reply(serializedBytes: message.bytes)
        }
        return nil
    }

    /// Records until `stop`. - Returns: the summary line.
    func run(until stop: Stop) throws -> String {
        defer {
            writer.close()
            dealer.close()
        }
        var hello = Statebus_V1_Hello()
        hello.viewID = viewID
        hello.nodeName = "record"
        _ = try send(.hello(hello))
        guard let welcomeReply = try reply(until: .now + timeout), case .welcome(let welcome) = welcomeReply.body else {
            throw RecordingError("no welcome from \(control) within \(timeout): is the host running, and is the endpoint right?")
        }
        guard welcome.objects.contains(where: { $0.name == object }) else {
            throw RecordingError(
                "the host at \(control) serves no object '\(object)'; it serves: \(welcome.objects.map(\.name).joined(separator: ", "))")
        }
        try writer.append("welcome", try welcome.serializedBytes())
        let subscriber = try Socket(context: context, type: .sub)
        defer { subscriber.close() }
        try subscriber.set(.receiveHighWaterMark, 100_000)
        try subscriber.subscribe(UpdatesEndpoint.topic(of: object))
        try subscriber.subscribe(UpdatesEndpoint.joinTopic(of: viewID))
        try subscriber.connect(UpdatesEndpoint.reachable(welcome.updatesEndpoint, controlEndpoint: control))

        // Updates that arrive before the snapshot wait here; those after it are recorded.
        var waiting: [Statebus_V1_Publication] = []
        var sequence: UInt64 = 0
        var first: UInt64 = 0
        let poller = Poller()
        poller.add(subscriber, events: .readable)
        func receive() throws -> Statebus_V1_Publication? {
            guard let frames = try subscriber.tryReceiveMultipart(), frames.count == 2 else { return nil }
            return try Statebus_V1_Publication(serializedBytes: frames[1].bytes)
        }
        let joinDeadline = ContinuousClock.now + timeout
        joined: while true {
            guard ContinuousClock.now < joinDeadline else { throw RecordingError("no join marker from \(control) within \(timeout)") }
            guard try !poller.poll(timeout: .milliseconds(50)).isEmpty else { continue }
            while let publication = try receive() {
                if publication.hasJoinMarker { break joined }
                waiting.append(publication)
            }
        }
        func snapshot() throws {
            var request = Statebus_V1_SnapshotRequest()
            request.object = object
            let id = try send(.snapshot(request))
            while true {
                guard let answer = try reply(until: .now + timeout) else { throw RecordingError("no snapshot from \(control) within \(timeout)") }
                guard answer.requestID == id, case .snapshotChunk(let chunk) = answer.body else { continue }
                try writer.append("chunk", try chunk.serializedBytes())
                if chunk.last {
                    sequence = chunk.sequence
                    return
                }
            }
        }
        try snapshot()
        first = sequence
        emit("recording object=\(object) sequence=\(sequence)")
        func record(_ publication: Statebus_V1_Publication) throws {
            let batches = publication.updates.filter { $0.object == object && $0.sequence > sequence }
            guard !batches.isEmpty else { return }
            if batches[0].sequence != sequence + 1 {
                // Missed publications (this process fell behind): a new snapshot starts over.
                try snapshot()
                return
            }
            try writer.append("publication", try publication.serializedBytes())
            sequence = batches.last!.sequence
        }
        for publication in waiting { try record(publication) }
        while !stop.isSet {
            guard try !poller.poll(timeout: .milliseconds(100)).isEmpty else { continue }
            while let publication = try receive() { try record(publication) }
        }
        return "recorded \(writer.publications) publications, sequence \(first) to \(sequence)"
    }
}
