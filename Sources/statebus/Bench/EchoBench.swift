import Foundation
import StateBus
import StateBusLaunch
import Synchronization
import ZeroMQ

/// Write-to-echo latency: a view writes a property and waits until the host's broadcast of
/// that write has arrived back and been applied; one write at a time.
///
/// StateBus: the host runs in the bench process; the writing view is a worker process.
/// Raw: the bench process runs a ROUTER → PUB relay on a thread of its own; the worker sends
/// each message on a DEALER and waits for it on a SUB (the same DEALER → ROUTER → PUB → SUB
/// cycle, plain messages of the size of an integer update on StateBus's wire).
struct EchoBench {
    /// Latency percentiles in nanoseconds.
    struct Outcome: Sendable {
        var p50: Double
        var p99: Double
        var p999: Double
        var count: Int
        /// Every write was accepted and echoed in order with its own value.
        var complete: Bool
        var problem: String?
    }

    let writes: Int
    let warmup: Int
    /// With CURVE keys on the host and the view (the "with keys" row).
    var keyed = false

    /// StateBus: a host in this process, one writing view process.
    func runStateBus() async throws -> Outcome {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        var configuration = HostConfiguration(
            name: "bench", controlEndpoint: folder.endpoint("host.control"), persistence: .disabled, logger: BenchLogger.quiet)
        let keys = keyed ? try BenchKeys(folder: folder) : nil
        configuration.security = keys?.host
        let host = try await StateHost(
            objects: [ObjectDefinition(ViewWorkers.object, properties: [PropertyDefinition("echo", kind: .int, default: .int(0))])],
            configuration: configuration
        )
        defer { host.stop() }
        let workers = WorkerGroup()
        defer { workers.terminateAll() }
        let writer = try workers.start(
            "echo", ["--control", host.controlEndpoint, "--count", "\(writes)", "--warmup", "\(warmup)"], environment: keys?.viewEnvironment ?? [:],
            name: "echo view")
        let result = try await WorkerGroup.line("result", from: writer, timeout: .seconds(600))
        var outcome = Self.outcome(result)
        let expected = Value.int(Int64(writes + warmup))
        if host.value(of: "echo", in: ViewWorkers.object) != expected {
            outcome.complete = false
            outcome.problem = "the host holds \(host.value(of: "echo", in: ViewWorkers.object) ?? .null), expected \(expected)"
        }
        return outcome
    }

    /// Raw libzmq: a ROUTER → PUB relay in this process, one DEALER + SUB process.
    func runRaw() async throws -> Outcome {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let control = folder.endpoint("raw.control")
        let updates = folder.endpoint("raw.updates")
        let stop = StopFlag()
        let relay = Task { try await BlockingThread.run("bench-raw-relay") { try Self.relay(control: control, updates: updates, stop: stop) } }
        defer { stop.set() }
        let workers = WorkerGroup()
        defer { workers.terminateAll() }
        let size = 8 + PayloadKind.int.valueBytes
        let writer = try workers.start(
            "raw-echo", ["--control", control, "--updates", updates, "--count", "\(writes)", "--warmup", "\(warmup)", "--size", "\(size)"],
            name: "raw echo")
        let result = try await WorkerGroup.line("result", from: writer, timeout: .seconds(600))
        stop.set()
        let relayed = try await relay.value
        var outcome = Self.outcome(result)
        if relayed < writes + warmup {
            outcome.complete = false
            outcome.problem = "the relay forwarded \(relayed) messages, fewer than \(writes + warmup)"
        }
        return outcome
    }

    private static func outcome(_ result: WorkerLine) -> Outcome {
        Outcome(
            p50: Double(result.uint("p50") ?? 0), p99: Double(result.uint("p99") ?? 0), p999: Double(result.uint("p999") ?? 0),
            count: result.int("count") ?? 0, complete: result.bool("ok"),
            problem: result.bool("ok") ? nil : "accepted \(result.fields["accepted"] ?? "?"), wrong values \(result.fields["wrong"] ?? "?")"
        )
    }

    /// Forwards every DEALER message arriving at the ROUTER to the PUB, until `stop`.
    /// - Returns: how many messages it forwarded.
    private static func relay(control: String, updates: String, stop: StopFlag) throws -> Int {
        let context = try Context()
        defer { context.terminate() }
        let router = try Socket(context: context, type: .router)
        let publisher = try Socket(context: context, type: .pub)
        defer {
            router.close()
            publisher.close()
        }
        try router.bind(control)
        try publisher.bind(updates)
        let poller = Poller()
        poller.add(router, events: .readable)
        let identity = Message()
        let payload = Message()
        var forwarded = 0
        while !stop.isSet {
            guard try !poller.poll(timeout: .milliseconds(100)).isEmpty else { continue }
            while try router.receive(into: identity, wait: false) {
                guard identity.hasMore else { continue }
                try router.receive(into: payload)
                try publisher.send(payload)
                forwarded += 1
            }
        }
        return forwarded
    }
}

/// A flag one thread sets and another polls.
final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}
