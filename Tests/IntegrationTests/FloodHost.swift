import Foundation
import StateBus
import StateBusTesting
import StateBusWire
import SwiftProtobuf
import Testing
import ZeroMQ

/// A real `statebus host` process for the flood tests, with a view connected before the
/// flood, and the probes the tests use: a ping on a fresh connection, the host's RSS.
///
/// The object `Flood` has two writable properties the flood never names and one read-only
/// one (`locked`) that the flood's writes target: every write the flood sends must be
/// refused, so the state stays exactly as it started.
final class FloodHost {
    let process: NodeProcess
    let control: String
    /// The updates endpoint, from the host's ready line.
    let updates: String
    let folder: String
    let view: Replica
    let context: Context
    let valuesBefore: [String: Value]

    init() async throws {
        folder = "/tmp/sbflood-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        control = "ipc://\(folder)/control"
        process = try NodeProcess(
            executable: try BuiltProducts.executable("statebus"),
            arguments: [
                "host", "--control", control, "--object", "Flood", "--property", "text:string=steady",
                "--property", "count:int=7", "--property", "locked:int!=42", "--no-persistence"
            ], name: "flood-host")
        do {
            let ready = try await process.waitForLine("ready") { $0.hasPrefix("ready ") }
            updates = String(ready.split(separator: " ").first { $0.hasPrefix("updates=") }?.dropFirst("updates=".count) ?? "")
            view = try Replica(object: "Flood", controlEndpoint: control)
            try await view.waitUntilLive(timeout: .seconds(20))
            context = try Context()
        } catch {
            _ = process.terminate()
            throw error
        }
        valuesBefore = view.values
    }

    /// Stops the view and the host; the host must still be running (a crash is a failure).
    func stop() -> Bool {
        let wasRunning = process.isRunning
        view.close()
        _ = process.terminate()
        try? FileManager.default.removeItem(atPath: folder)
        return wasRunning
    }

    /// The host's resident memory in MiB (`VmRSS` of `/proc/PID/status`).
    var residentMiB: Int {
        guard let status = try? String(contentsOfFile: "/proc/\(process.pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return -1 }
        return kilobytes / 1024
    }

    /// Whether the host answers a ping on a fresh connection within `timeout`.
    func answersPing(timeout: Duration = .seconds(5)) throws -> Bool {
        let probe = try Socket(context: context, type: .dealer)
        defer { probe.close() }
        try probe.set(.linger, 0)
        try probe.connect(control)
        _ = try probe.send(try Self.request(id: 99, .ping(Statebus_V1_Ping())).serializedBytes() as [UInt8])
        let poller = Poller()
        _ = poller.add(probe, events: .readable)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            _ = try poller.poll(timeout: .milliseconds(100))
            while let message = try probe.tryReceive() {
                if let reply = try? Statebus_V1_Reply(serializedBytes: message.bytes), reply.requestID == 99, case .pong = reply.body { return true }
            }
        }
        return false
    }

    /// Sends frames on the host's updates socket from an XSUB that then leaves.
    ///
    /// Subscriptions stay at 64 KiB each: libzmq 4.3.4's XSUB keeps its own copy of them in a
    /// trie whose destructor recurses once per byte, so closing a socket that subscribed
    /// 1 MiB overflows the stack of libzmq's reaper thread (SIGSEGV in the sender; seen
    /// here with a 1 MiB subscription).
    func sendOnUpdates(_ frames: [[UInt8]]) throws {
        let socket = try Socket(context: context, type: .xsub)
        defer { socket.close() }
        try socket.connect(updates)
        // Not the 0 linger `Socket` sets: closing must not drop frames not yet sent.
        try socket.set(.linger, 10_000)
        for frame in frames { _ = try socket.send(frame) }
    }

    /// Expects the state as it was before the flood, seen by the view connected before it
    /// (live, with no resync: a gap or missed heartbeats would have made it take another
    /// snapshot) and by a new `statebus get`. Returns what it saw, for the test's line.
    func expectUnchanged(sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let get = try NodeProcess(
            executable: try BuiltProducts.executable("statebus"), arguments: ["get", "--control", control, "--object", "Flood", "text"], name: "get")
        defer { _ = get.terminate() }
        let status = try await get.exited(timeout: .seconds(20))
        let text = get.output.last ?? ""
        let statistics = view.statistics
        #expect(
            view.values == valuesBefore && statistics.appliedUpdates == 0,
            "the view's state changed: \(view.values), \(statistics.appliedUpdates) updates", sourceLocation: sourceLocation)
        #expect(view.connectionState == .live, "the view is \(view.connectionState)", sourceLocation: sourceLocation)
        #expect(
            statistics.appliedSnapshots == 1,
            "the view resynchronised \(statistics.appliedSnapshots - 1) times (it took \(statistics.appliedSnapshots) snapshots): a gap, or no heartbeat for 3 intervals",
            sourceLocation: sourceLocation)
        #expect(status == 0 && text == "\"steady\"", "statebus get exited \(status) and printed \(text)", sourceLocation: sourceLocation)
        return "view \(view.connectionState) snapshots=\(statistics.appliedSnapshots) updates=\(statistics.appliedUpdates); get printed \(text)"
    }

    static func request(id: UInt64, _ body: Statebus_V1_Request.OneOf_Body) -> Statebus_V1_Request {
        var request = Statebus_V1_Request()
        request.protocolVersion = StateBusProtocol.version
        request.requestID = id
        request.body = body
        return request
    }

    /// A write of `locked` (read-only: refused) whose frame is `size` bytes or a few more.
    static func write(size: Int) throws -> [UInt8] {
        var write = Statebus_V1_WriteRequest()
        write.object = "Flood"
        // No view id: an anonymous write is handled without a hello (this test is about sizes).
        write.writeID = 1
        var change = Statebus_V1_Change()
        change.property = "locked"
        change.value.bytesValue = Data()
        write.changes = [change]
        var request = Self.request(id: 5, .write(write))
        var length = size
        var bytes: [UInt8] = []
        for _ in 0..<8 {  // each length prefix grows with its content
            request.write.changes[0].value.bytesValue = Data(count: max(0, length))
            bytes = try request.serializedBytes()
            if bytes.count == size { break }
            length += size - bytes.count
        }
        return bytes
    }
}
