import Foundation
import StateBusLaunch
import StateBusRuntime

/// Fan-out: many views of one host, connected directly or through relays, every process
/// real: a ``FanoutHost``, `statebus relay` processes, and `statebus load` processes holding
/// the views.
///
/// Three figures per arrangement: the **join storm** (every view joining at once while the
/// host changes `churn` properties per millisecond: the time from starting the view
/// processes until the last view is live, and how many views had to resynchronise: a goal
/// of none, which a view behind the stream by more than its queue misses, and converges
/// anyway); **updates per second at the slowest view** (the host makes `updates`
/// changes as fast as it can; the time until every view has applied the last); and the
/// **host's CPU time per update** over that run, less what the host spends idle with the same
/// views connected (measured over a second just before: heartbeats and timers, which would
/// otherwise count more the longer the slowest view takes), which through relays must not
/// grow with the number of views behind them.
struct FanoutBench {
    struct Outcome: Sendable {
        var joinNanoseconds: Double
        /// Resynchronisations (and their causes) by the end of the join storm.
        var joinResyncs: Resyncs
        /// Resynchronisations by the end of the run (the join storm's included).
        var resyncs: Resyncs
        var slowestRate: Double
        var hostCPUPerUpdate: Double
    }

    /// What the views' `status` lines add up to: resyncs, and the gaps and reconnections
    /// behind them.
    struct Resyncs: Sendable, CustomStringConvertible {
        var resyncs = 0
        var gaps = 0
        var reconnects = 0
        var description: String { "\(resyncs) resyncs (\(gaps) sequence gaps, \(reconnects) reconnections)" }
    }

    let views: Int
    /// 0: every view joins the host itself.
    let relays: Int
    /// Processes holding the views (the views are split evenly among them).
    let loadProcesses: Int
    let updates: Int
    let churn: Int
    /// How long the host's idle CPU is measured before the run.
    let idleWindow: Duration

    func run() async throws -> Outcome {
        let workers = WorkerGroup()
        defer { workers.terminateAll() }
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let host = try workers.start("fanout-host", ["--properties", "100", "--churn", "0"], name: "fan-out host")
        let ready = try await WorkerGroup.line("ready", from: host, timeout: .seconds(120))
        guard let control = ready.fields["control"] else { throw BenchError("the fan-out host announced no control endpoint") }
        // Every relay started, then each waited for: they join the host side by side.
        let relayProcesses = try (0..<relays).map { index in
            try workers.startCommand(
                ["relay", "--upstream", control, "--control", folder.endpoint("relay\(index).control"), "--name", "relay\(index)"],
                name: "relay \(index)")
        }
        var relayEndpoints: [String] = []
        for (index, relay) in relayProcesses.enumerated() {
            let line = try await relay.waitForLine("relay \(index) ready", timeout: .seconds(120)) { $0.hasPrefix("ready ") }
            guard let endpoint = Self.field("control", in: line) else { throw BenchError("relay \(index) announced no control endpoint: \(line)") }
            relayEndpoints.append(endpoint)
        }

        // The join storm.
        host.send(line: "churn \(churn)")
        let start = ContinuousClock.now
        var loads: [NodeProcess] = []
        for index in 0..<loadProcesses {
            let endpoint = relays == 0 ? control : relayEndpoints[index % relays]
            let count = views / loadProcesses + (index < views % loadProcesses ? 1 : 0)
            loads.append(
                try workers.startCommand(
                    [
                        "load", "--control", endpoint, "--object", ViewWorkers.object, "--views", "\(count)", "--report-ms", "0", "--start-timeout",
                        "180"
                    ],
                    name: "views \(index)"))
        }
        for load in loads {
            _ = try await load.waitForLine("every view of \(load.name) live", timeout: .seconds(200)) { $0.hasPrefix("ready views=") }
        }
        let joined = ContinuousClock.now - start
        host.send(line: "churn 0")
        let joinResyncs = try await Self.resyncs(of: loads)

        // What the host spends idle with these views connected (heartbeats, timers), to take
        // out of its CPU time over the run: the run lasts as long as the slowest view takes.
        var mark = host.lineCount
        host.send(line: "cpu")
        let idleStart = try await WorkerGroup.line("cpu", from: host, after: mark, timeout: .seconds(60))
        try await Task.sleep(for: idleWindow)  // an idle time to measure, not synchronisation
        mark = host.lineCount
        host.send(line: "cpu")
        let before = try await WorkerGroup.line("cpu", from: host, after: mark, timeout: .seconds(60))
        let idleRate = Self.cpuRate(from: idleStart, to: before)

        // Updates at the slowest view, and the host's CPU time for them.
        mark = host.lineCount
        host.send(line: "publish \(updates)")
        let published = try await WorkerGroup.line("published", from: host, after: mark, timeout: .seconds(600))
        guard let last = published.uint("last"), let started = published.uint("start") else {
            throw BenchError("the host did not say what it published")
        }
        var slowest: UInt64 = started
        for load in loads {
            let mark = load.lineCount
            load.send(line: "wait \(last)")
            let line = try await load.waitForLine("\(load.name) reaching sequence \(last)", after: mark, timeout: .seconds(600)) {
                $0.hasPrefix("reached ")
            }
            slowest = max(slowest, Self.field("at", in: line).flatMap { UInt64($0) } ?? slowest)
        }
        mark = host.lineCount
        host.send(line: "cpu")
        let after = try await WorkerGroup.line("cpu", from: host, after: mark, timeout: .seconds(60))
        let resyncs = try await Self.resyncs(of: loads)
        let elapsed = Double((after.uint("at") ?? 0) &- (before.uint("at") ?? 0))
        let cpu = max(0, Double((after.uint("ns") ?? 0) &- (before.uint("ns") ?? 0)) - idleRate * elapsed)
        return Outcome(
            joinNanoseconds: joined.inNanoseconds,
            joinResyncs: joinResyncs,
            resyncs: resyncs,
            slowestRate: Double(updates) / (Double(slowest - started) / 1e9),
            hostCPUPerUpdate: cpu / Double(updates))
    }

    /// Asks every load process for a status line and adds up its resyncs.
    static func resyncs(of loads: [NodeProcess]) async throws -> Resyncs {
        var total = Resyncs()
        for load in loads {
            let mark = load.lineCount
            load.send(line: "status")
            let line = try await load.waitForLine("\(load.name) status", after: mark, timeout: .seconds(60)) { $0.hasPrefix("status ") }
            total.resyncs += field("resyncs", in: line).flatMap { Int($0) } ?? 0
            total.gaps += field("gaps", in: line).flatMap { Int($0) } ?? 0
            total.reconnects += field("reconnects", in: line).flatMap { Int($0) } ?? 0
        }
        return total
    }

    /// CPU nanoseconds per wall nanosecond between two `cpu` lines.
    static func cpuRate(from start: WorkerLine, to end: WorkerLine) -> Double {
        let wall = Double((end.uint("at") ?? 0) &- (start.uint("at") ?? 0))
        guard wall > 0 else { return 0 }
        return Double((end.uint("ns") ?? 0) &- (start.uint("ns") ?? 0)) / wall
    }

    /// The value of `key=value` in a line of words.
    static func field(_ key: String, in line: String) -> String? {
        line.split(separator: " ").first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
    }
}
