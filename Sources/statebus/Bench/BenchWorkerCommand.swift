import ArgumentParser
import Foundation
import StateBusCommandLine

/// `statebus bench-worker ROLE …`: one process of a benchmark, started by `statebus bench`.
///
/// Hidden from help: a person never runs it. Each role prints `bench ready …` once it is in
/// place and `bench result …` (or `bench failed reason=…`) when done; the bench process reads
/// those lines (``WorkerLine``) and ends the worker afterwards.
struct BenchWorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-worker",
        abstract: "One process of `statebus bench` (internal).",
        discussion: """
            Prints `bench ready …` once in place and `bench result …` or `bench failed reason=…` \
            when done. `statebus bench` starts it; run by hand only to debug a benchmark.

            Examples:
              statebus bench-worker host --properties 1000 --churn 10
              statebus bench-worker view --control ipc:///tmp/bench/control --kind string --count 100000
            """,
        shouldDisplay: false
    )

    /// What the worker does.
    enum Role: String, ExpressibleByArgument, CaseIterable {
        /// A StateBus view that counts the host's updates (throughput).
        case view
        /// A StateBus view that writes and waits for each write's verdict and broadcast (echo latency).
        case echo
        /// A StateBus view that records when each of another view's writes arrives (echo latency).
        case observe
        /// A StateBus view that joins a large object (late join, view memory).
        case join
        /// A StateBus view that makes acknowledged writes to a persisted property.
        case durable
        /// A StateBus host serving many properties, changing them all the time (join, memory).
        case host
        /// A StateBus host taking commands on standard input (fan-out): `churn N`,
        /// `publish N`, `cpu`.
        case fanoutHost = "fanout-host"
        /// A raw libzmq SUB socket that counts messages (throughput baseline).
        case rawSub = "raw-sub"
        /// A raw libzmq DEALER + SUB pair measuring round trips (echo baselines).
        case rawEcho = "raw-echo"
        /// A raw libzmq SUB recording arrivals (the echo-at-another-view baseline).
        case rawObserve = "raw-observe"
    }

    @Argument(help: "The worker's role: \(Role.allCases.map(\.rawValue).joined(separator: ", ")).")
    var role: Role

    @Option(help: "The StateBus host's control endpoint, or the raw baseline's DEALER/ROUTER endpoint.")
    var control: String?

    @Option(help: "The raw baseline's PUB endpoint.")
    var updates: String?

    @Option(help: "The payload kind.")
    var kind: PayloadKind = .int

    @Option(help: "How many messages or updates to expect, or writes to make.")
    var count: Int = 1000

    @Option(help: "Round trips made before measuring (echo).")
    var warmup: Int = 0

    @Option(help: "Writes kept in flight (durable).")
    var window: Int = 1

    @Option(help: "Bytes per raw message.")
    var size: Int = 16

    @Option(help: "The echo path: own (the round trip to the writer) or other (to another view).")
    var path: String = "own"

    @Option(help: "Where to write the echo's send or arrival times.")
    var out: String?

    @Option(help: "Where the echo's writer writes when its own copy of each write came.")
    var ownCopies: String?

    @Option(help: "The named pipe on which the echo's observer reports each value to the writer.")
    var reports: String?

    @Option(help: "Pin the worker's threads to this CPU (the low-latency profile).")
    var cpu: Int32?

    @Option(help: "Properties of the object (host, join).")
    var properties: Int = 1000

    @Option(help: "Changes the host makes per millisecond while serving (host).")
    var churn: Int = 0

    func validate() throws {
        guard count > 0, warmup >= 0, window > 0, size >= 8, properties > 0, churn >= 0 else {
            throw ValidationError("--count, --window and --properties must be positive, --size at least 8, --warmup and --churn not negative")
        }
        if [.view, .echo, .observe, .join, .durable, .rawEcho].contains(role), control == nil {
            throw ValidationError("the \(role.rawValue) worker needs --control")
        }
        guard EchoBench.Path(rawValue: path) != nil else { throw ValidationError("--path is own or other, not '\(path)'") }
        if [.observe, .rawObserve].contains(role), out == nil { throw ValidationError("the \(role.rawValue) worker needs --out") }
    }

    func run() async throws {
        do {
            switch role {
            case .view: try await ViewWorkers.countUpdates(control: control!, kind: kind, updates: count)
            case .echo:
                try await ViewWorkers.echo(
                    control: control!, writes: count, warmup: warmup, out: out, ownCopies: ownCopies, reports: reports, cpu: cpu)
            case .observe: try await ViewWorkers.observe(control: control!, count: count, out: out!, reports: reports, cpu: cpu)
            case .join: try await ViewWorkers.join(control: control!, properties: properties)
            case .durable: try await ViewWorkers.durableWrites(control: control!, writes: count, window: window)
            case .host: try await HostWorker.serve(properties: properties, churnPerMillisecond: churn)
            case .fanoutHost: try await FanoutHost.serve(properties: properties, churnPerMillisecond: churn)
            case .rawSub:
                guard let updates else { throw ValidationError("raw-sub needs --updates") }
                try RawWorkers.subscribe(endpoint: updates, count: count)
            case .rawEcho:
                guard let updates else { throw ValidationError("raw-echo needs --updates") }
                try RawWorkers.echo(
                    control: control!, updates: updates, path: EchoBench.Path(rawValue: path)!, writes: count, warmup: warmup, size: size, out: out,
                    ownCopies: ownCopies, reports: reports, cpu: cpu)
            case .rawObserve:
                guard let updates else { throw ValidationError("raw-observe needs --updates") }
                try RawWorkers.observe(updates: updates, count: count, out: out!, reports: reports, cpu: cpu)
            }
        } catch {
            WorkerLine.emit("failed", ["reason": "\(error)".replacingOccurrences(of: " ", with: "_")])
            throw ExitCode(1)
        }
    }
}
