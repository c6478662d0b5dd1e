import Foundation
import StateBus
import StateBusLaunch
import StateBusRuntime
import Synchronization
import ZeroMQ

/// Write latency, one write at a time, on two paths:
///
/// - **own confirmation**: from a view's write until that view holds the host's verdict
///   (``WriteReceipt/accepted()``). Raw baseline: a DEALER's message echoed back by a
///   ROUTER (the DEALER ↔ ROUTER round trip).
/// - **echo at another view**: from a view's write until a second view process has applied
///   it. Raw baseline: a DEALER's message forwarded by a ROUTER to a PUB and received by a
///   SUB in another process (DEALER → ROUTER → PUB → SUB).
///
/// StateBus: the host runs in the bench process, the views are worker processes whose
/// measuring code runs on the replica's loop (``Replica/executor``). Every write waits until
/// the writer has both the verdict and the broadcast before the next one, and for the echo
/// at another view until the observing view has it too (``ObserverReports``), so each round
/// trip starts from a quiet system; the raw writer likewise waits for its own copy and the
/// raw observer's report. Times on two processes are read from the machine-wide monotonic
/// clock; the writer's own-copy times tell which view the host's copies reached first
/// (``EchoOrders``).
///
/// **Pinned** (the low-latency profile): every process's loop and libzmq I/O threads on one
/// CPU (``HostConfiguration/pinnedCPU``, ``ReplicaConfiguration/pinnedCPU``); the raw
/// baseline pinned the same way.
struct EchoBench {
    /// The two measured paths.
    enum Path: String, Sendable {
        case own, other
    }

    /// Latency percentiles in nanoseconds.
    struct Outcome: Sendable {
        var p50: Double
        var p99: Double
        var p999: Double
        var count: Int
        /// Every write was accepted (and seen) in order with its own value.
        var complete: Bool
        var problem: String?
        /// The echo at another view: whether most writes reached the observer before the
        /// writer had its own copy (the host's copy to the observer left first); `nil` for
        /// the own confirmation.
        var observerFirst: Bool? = nil

        /// The rounds of one figure as one: each percentile the median of the rounds' (the
        /// mean of the middle two for an even count), the counts added; `nil` for no round.
        static func median(of rounds: [Outcome]) -> Outcome? {
            guard !rounds.isEmpty else { return nil }
            func median(_ figure: KeyPath<Outcome, Double>) -> Double {
                let sorted = rounds.map { $0[keyPath: figure] }.sorted()
                let middle = sorted.count / 2
                return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
            }
            return Outcome(
                p50: median(\.p50), p99: median(\.p99), p999: median(\.p999), count: rounds.reduce(0) { $0 + $1.count },
                complete: rounds.allSatisfy(\.complete), problem: rounds.compactMap(\.problem).first)
        }
    }

    let writes: Int
    let warmup: Int
    /// With CURVE keys on the host and the views (the "with keys" rows).
    var keyed = false
    /// The low-latency profile: everything pinned to this CPU.
    var pinnedCPU: Int32? = nil

    private var cpuArguments: [String] { pinnedCPU.map { ["--cpu", "\($0)"] } ?? [] }

    // MARK: StateBus

    /// StateBus: a host in this process, a writing view process and, for `.other`, an
    /// observing one.
    func runStateBus(_ path: Path) async throws -> Outcome {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        var configuration = HostConfiguration(
            name: "bench", controlEndpoint: folder.endpoint("host.control"), persistence: .disabled, logger: BenchLogger.quiet)
        let keys = keyed ? try BenchKeys(folder: folder) : nil
        configuration.security = keys?.host
        configuration.pinnedCPU = pinnedCPU
        let host = try await StateHost(
            objects: [ObjectDefinition(ViewWorkers.object, properties: [PropertyDefinition("echo", kind: .int, default: .int(0))])],
            configuration: configuration
        )
        defer { host.stop() }
        let workers = WorkerGroup()
        defer { workers.terminateAll() }
        let environment = keys?.viewEnvironment ?? [:]
        let total = writes + warmup
        let files = try EchoRoundFiles(folder: folder, path: path)
        var observer: NodeProcess?
        if path == .other {
            let process = try workers.start(
                "observe", ["--control", host.controlEndpoint, "--count", "\(total)"] + files.observerArguments + cpuArguments,
                environment: environment, name: "observing view")
            _ = try await WorkerGroup.line("ready", from: process, timeout: .seconds(120))
            observer = process
        }
        let writer = try workers.start(
            "echo",
            ["--control", host.controlEndpoint, "--count", "\(writes)", "--warmup", "\(warmup)"] + files.writerArguments + cpuArguments,
            environment: environment, name: "writing view")
        let result = try await WorkerGroup.line("result", from: writer, timeout: .seconds(600))
        var outcome = Self.outcome(result)
        let expected = Value.int(Int64(total))
        if host.value(of: "echo", in: ViewWorkers.object) != expected {
            outcome.complete = false
            outcome.problem = "the host holds \(host.value(of: "echo", in: ViewWorkers.object) ?? .null), expected \(expected)"
        }
        guard let observer else { return outcome }
        let seen = try await WorkerGroup.line("result", from: observer, timeout: .seconds(120))
        guard seen.bool("ok") else {
            return Outcome(
                p50: 0, p99: 0, p999: 0, count: 0, complete: false,
                problem: "the observing view saw \(seen.fields["seen"] ?? "?") of \(total) values, resyncs \(seen.fields["resyncs"] ?? "?")")
        }
        return try Self.crossProcess(files, warmup: warmup, writerOK: outcome.complete, problem: outcome.problem)
    }

    // MARK: Raw libzmq

    /// Raw libzmq: a ROUTER (echoing, or forwarding to a PUB) on a thread of this process, a
    /// writing DEALER process and, for `.other`, an observing SUB process.
    func runRaw(_ path: Path) async throws -> Outcome {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let control = folder.endpoint("raw.control")
        let updates = folder.endpoint("raw.updates")
        let stop = StopFlag()
        let cpu = pinnedCPU
        let relay = Task {
            try await onThreadOfItsOwn(named: "bench-raw-relay") {
                try RawRelay.run(control: control, updates: updates, echo: path == .own, cpu: cpu, stop: stop)
            }
        }
        defer { stop.set() }
        let workers = WorkerGroup()
        defer { workers.terminateAll() }
        let size = 8 + PayloadKind.int.valueBytes
        let total = writes + warmup
        let files = try EchoRoundFiles(folder: folder, path: path)
        var observer: NodeProcess?
        if path == .other {
            let process = try workers.start(
                "raw-observe", ["--updates", updates, "--count", "\(total)"] + files.observerArguments + cpuArguments, name: "raw observer")
            _ = try await WorkerGroup.line("ready", from: process, timeout: .seconds(120))
            observer = process
        }
        let writer = try workers.start(
            "raw-echo",
            [
                "--control", control, "--updates", updates, "--path", path.rawValue, "--count", "\(writes)", "--warmup", "\(warmup)", "--size",
                "\(size)"
            ] + files.writerArguments + cpuArguments,
            name: "raw writer")
        let result = try await WorkerGroup.line("result", from: writer, timeout: .seconds(600))
        stop.set()
        let relayed = try await relay.value
        var outcome = Self.outcome(result)
        if relayed < total {
            outcome.complete = false
            outcome.problem = "the relay forwarded \(relayed) messages, fewer than \(total)"
        }
        guard let observer else { return outcome }
        let seen = try await WorkerGroup.line("result", from: observer, timeout: .seconds(120))
        guard seen.bool("ok") else {
            return Outcome(
                p50: 0, p99: 0, p999: 0, count: 0, complete: false, problem: "the raw observer saw \(seen.fields["seen"] ?? "?") of \(total)")
        }
        return try Self.crossProcess(files, warmup: warmup, writerOK: outcome.complete, problem: outcome.problem)
    }

    // MARK: Figures

    private static func outcome(_ result: WorkerLine) -> Outcome {
        Outcome(
            p50: Double(result.uint("p50") ?? 0), p99: Double(result.uint("p99") ?? 0), p999: Double(result.uint("p999") ?? 0),
            count: result.int("count") ?? 0, complete: result.bool("ok"),
            problem: result.bool("ok") ? nil : "accepted \(result.fields["accepted"] ?? "?"), wrong values \(result.fields["wrong"] ?? "?")"
        )
    }

    /// The latencies from the writer's send times to the observer's arrival times, and
    /// which of the two the host's copies reached first.
    private static func crossProcess(_ files: EchoRoundFiles, warmup: Int, writerOK: Bool, problem: String?) throws -> Outcome {
        let (sent, arrived) = (try EchoTimes.read(files.sent), try EchoTimes.read(files.arrived))
        let latencies = try EchoTimes.latencies(sent: sent, arrived: arrived, skipping: warmup)
        let firstShare = try EchoTimes.shareArrivedFirst(arrived, before: EchoTimes.read(files.ownCopies), skipping: warmup)
        return Outcome(
            p50: Double(latencies.valueAtPercentile(50)), p99: Double(latencies.valueAtPercentile(99)),
            p999: Double(latencies.valueAtPercentile(99.9)), count: Int(latencies.totalCount), complete: writerOK, problem: problem,
            observerFirst: firstShare > 0.5)
    }
}

/// A flag one thread sets and another polls.
final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}
