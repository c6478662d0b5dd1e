import ArgumentParser
import Foundation
import ZeroMQ

/// `statebus bench`: measures StateBus against raw libzmq on this machine, in the same run,
/// with real processes, and prints the figures beside their baselines and goals.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure update throughput, echo latency, late join, memory and durable writes against raw libzmq.",
        discussion: """
            Every figure comes from real processes (this executable, started again as hidden \
            workers) on ipc:// endpoints in a fresh temporary folder, beside the raw-libzmq \
            figure measured in the same run through the same socket types and message sizes. \
            Every view checks that it received every update in order; a figure whose check \
            fails is not counted, and the command exits 1. Goals are reported, never assumed: \
            each figure with a target is judged against its bar and the goal beyond it \
            (ratios to raw libzmq for throughput and latency; Qt Remote Objects' figures \
            from the same run, with --peer qtro, for the late join of 10,000 properties \
            and the view's memory; time for the late join of 100,000). The echo rows run twice: \
            as a default host and view, and in the low-latency profile (pinnedCPU: the loop \
            thread and libzmq's I/O thread of every process on CPU 0, raw pinned likewise); \
            each in rounds where StateBus and raw take turns (5 in the full run, 9 in the \
            low-latency profile), so that a machine whose speed drifts slows both alike; a \
            figure is the rounds' median, and its note lists each round's ratio and figures \
            (the run's own spread). Each write of the echo at another view waits until the \
            watching view has the last one. In the low-latency profile that echo has two \
            modes, one for each order in which the host's copies reach the two views (a draw \
            each round's host makes, for raw as for StateBus): rounds are added, up to three \
            times as many, until each side drew both, each order has its row, and the figure \
            judged is the mean of the two orders' medians. The throughput rows the bench \
            judges at 1 and 3 views (Int, string and struct at 1, Int at 3) run 3 such rounds \
            in the full run, and each side's figure is its median round. The full run joins 5 \
            times at each size, each time a new host and view, and takes the median; with \
            --peer qtro, QtRO's joins run in 5 rounds too, taking turns with StateBus's, and \
            its figure is their median. \
            Build with `swift build -c release` for real figures: a debug build prints a warning.

            Examples:
              statebus bench --quick              # a smoke run, under 30 s
              statebus bench                      # the full run, a few minutes
              statebus bench --quick --json > bench.json
              statebus bench --only echo --only join
              statebus bench --only keys          # what CURVE costs: Int to 1 view and echo, without and with keys
              statebus bench --only fanout        # 1,000 views on the host, and through 4 relays
              statebus bench --only collection    # one element changed in a 100,000-item collection; its late join
              statebus bench --only failover      # etcd: durable writes/s, and leader SIGKILL to every view on the new one
              statebus bench --only python --python .build/python-client/bin/python   # Int updates into a Python view, and pyzmq's
              statebus bench --quick --peer qtro  # then Qt Remote Objects' benchmark, with StateBus/QtRO ratios

            --peer qtro runs the Qt Remote Objects benchmark of ../shared/peers/qtro (or \
            --peer-dir, or $STATEBUS_QTRO_DIR), built before StateBus's figures and run after \
            them (its joins in turns with StateBus's), on a copy in a \
            scratch folder, when Qt 6 Remote Objects and cmake are installed; its figures go in \
            a QtRO column with StateBus/QtRO ratios (same sense as the raw ratio). Without Qt \
            the notes say why and the rest of the run stands. deploy/bench-plot.py draws a \
            --json report as a PNG.

            The python part measures a view written in Python (clients/python) beside a \
            pyzmq SUB receiving the raw stream, on the interpreter of --python (else \
            $STATEBUS_PYTHON, else python3), which must have the client installed \
            (pip install ./clients/python); without one, its row says why, and the run fails \
            only when --only python or --python asked for it.
            """
    )

    /// The parts of the benchmark.
    enum Section: String, CaseIterable, ExpressibleByArgument {
        case throughput, echo, join, durable, keys, fanout, collection, failover, python
    }

    @Flag(help: "A smoke run under 30 s: fewer updates and writes, Int at 1, 3 and 10 views, the other payloads at 1 view.")
    var quick = false

    @Flag(help: "A tiny run for the test suite: checks correctness, the figures mean little.")
    var tiny = false

    @Flag(help: "Print one JSON document instead of the table.")
    var json = false

    @Option(help: "Run only this part (\(Section.allCases.map(\.rawValue).joined(separator: ", "))); repeat for more. Memory comes with join.")
    var only: [Section] = []

    /// A product to measure beside StateBus in the same run.
    enum Peer: String, CaseIterable, ExpressibleByArgument {
        case qtro
    }

    @Option(help: "Measure this peer beside StateBus in the same run (\(Peer.allCases.map(\.rawValue).joined(separator: ", "))).")
    var peer: Peer?

    @Option(help: "The peer benchmark's folder (default: $STATEBUS_QTRO_DIR or ../shared/peers/qtro).")
    var peerDir: String?

    @Option(help: "The Python interpreter of the python part, with clients/python installed (default: $STATEBUS_PYTHON, else python3).")
    var python: String?

    func validate() throws {
        if quick && tiny { throw ValidationError("choose one of --quick and --tiny, not both") }
        if peerDir != nil && peer == nil { throw ValidationError("--peer-dir needs --peer qtro") }
    }

    func run() async throws {
        let plan: BenchPlan = tiny ? .tiny : quick ? .quick : .full
        #if DEBUG
            let build = "debug"
            FileHandle.standardError.write(
                Data("warning: this is a debug build; its figures are not StateBus's. Build with `swift build -c release` for real figures.\n".utf8))
        #else
            let build = "release"
        #endif
        let version = Context.libraryVersion
        var report = BenchReport(
            configuration: plan.name, build: build, date: ISO8601DateFormatter().string(from: Date()),
            machine:
                "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(Self.osName()), libzmq \(version.major).\(version.minor).\(version.patch)"
        )
        let sections = only.isEmpty ? Section.allCases : only
        var runner = BenchRunner(plan: plan, report: report, progress: !json)
        if peer == .qtro {
            // Before StateBus's figures: the peer's joins take turns with StateBus's.
            await runner.prepare(QtROPeer(directory: peerDir ?? QtROPeer.defaultDirectory, quick: plan.name != "full"))
        }
        if sections.contains(.throughput) { await runner.throughput() }
        if sections.contains(.echo) { await runner.echo() }
        if sections.contains(.join) { await runner.join() }
        if sections.contains(.durable) { await runner.durable() }
        if sections.contains(.keys) { await runner.keys() }
        if sections.contains(.fanout) { await runner.fanout() }
        if sections.contains(.collection) { await runner.collection() }
        if sections.contains(.failover) { await runner.failover() }
        if sections.contains(.python) {
            let client = await PythonClient.find(option: python, timeout: .seconds(60))
            await runner.python(client, required: python != nil || only.contains(.python))
        }
        if peer == .qtro { await runner.qtro() }
        report = runner.report
        report.judgeTargets()
        print(json ? try report.json() : report.table())
        if !report.allChecksPassed { throw ExitCode(1) }
    }

    private static func osName() -> String {
        guard let text = try? String(contentsOfFile: "/etc/os-release", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("PRETTY_NAME=") })
        else { return "Linux" }
        return line.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
    }
}

/// How much each part does.
struct BenchPlan: Sendable {
    let name: String
    /// Updates per throughput run.
    let updates: Int
    /// (payload, views) pairs to measure.
    let throughputRuns: [(PayloadKind, Int)]
    /// Rounds of each throughput figure the bench judges, StateBus's and raw libzmq's
    /// taking turns; the other figures run once.
    let throughputRounds: Int
    /// Timed writes and warm-up writes of each round of an echo figure.
    let echoWrites: Int
    let echoWarmup: Int
    /// Rounds of each echo figure, StateBus's and raw libzmq's taking turns, in the
    /// default profile and in the low-latency one; there the echo at another view runs up
    /// to three times as many, until each side drew both orders of the host's copies
    /// (``EchoOrders``).
    let echoRounds: Int
    let pinnedEchoRounds: Int
    let joinSizes: [Int]
    /// Joins of each size: the figure is their median, so that one slow join on a busy
    /// machine does not decide it.
    let joinRounds: Int
    /// Changes per millisecond the host makes during a join.
    let joinChurn: Int
    let durableWrites: Int
    let durableWindow: Int
    /// Writes for the one-at-a-time durable run.
    let durableSequentialWrites: Int
    /// Views of the fan-out runs, the relays in front of them, and the updates sent.
    let fanoutViews: Int
    let fanoutRelays: Int
    let fanoutUpdates: Int
    /// How long the host's idle CPU (heartbeats, timers) is measured before each fan-out run,
    /// to take out of its CPU per update. It weighs in proportion to the run's own length, so
    /// the short runs of `--quick` need only a short look.
    let fanoutIdleWindow: Duration
    /// Items of the keyed-collection run, and the one-element changes made to it.
    let collectionItems: Int
    let collectionUpdates: Int
    /// Leader kills of the failover run, and the views that follow.
    let failoverKills: Int
    let failoverViews: Int
    /// Updates into the Python view (and the pyzmq SUB).
    let pythonUpdates: Int

    static let tiny = BenchPlan(
        name: "tiny", updates: 2000, throughputRuns: PayloadKind.allCases.flatMap { kind in [(kind, 1), (kind, 3)] },
        throughputRounds: 2, echoWrites: 250, echoWarmup: 50, echoRounds: 2, pinnedEchoRounds: 2, joinSizes: [1000], joinRounds: 2, joinChurn: 2,
        durableWrites: 200, durableWindow: 16,
        durableSequentialWrites: 20, fanoutViews: 40, fanoutRelays: 2, fanoutUpdates: 2_000, fanoutIdleWindow: .milliseconds(200),
        collectionItems: 1_000, collectionUpdates: 200,
        failoverKills: 2, failoverViews: 3, pythonUpdates: 2_000
    )
    /// Every part, each at the size that still shows its figure and checks it, within the
    /// 30 s its help promises on two cores.
    static let quick = BenchPlan(
        name: "quick", updates: 200_000, throughputRuns: [(.int, 1), (.int, 3), (.int, 10), (.string, 1), (.struct, 1)],
        throughputRounds: 1, echoWrites: 3_000, echoWarmup: 1_000, echoRounds: 3, pinnedEchoRounds: 3, joinSizes: [10_000, 100_000], joinRounds: 1,
        joinChurn: 10, durableWrites: 500,
        durableWindow: 32, durableSequentialWrites: 50, fanoutViews: 100, fanoutRelays: 4, fanoutUpdates: 5_000, fanoutIdleWindow: .milliseconds(200),
        collectionItems: 100_000,
        collectionUpdates: 1_000, failoverKills: 1, failoverViews: 10, pythonUpdates: 50_000
    )
    static let full = BenchPlan(
        name: "full", updates: 1_000_000, throughputRuns: PayloadKind.allCases.flatMap { kind in [(kind, 1), (kind, 3), (kind, 10)] },
        throughputRounds: 3, echoWrites: 5_000, echoWarmup: 1_000, echoRounds: 5, pinnedEchoRounds: 9, joinSizes: [10_000, 100_000], joinRounds: 5,
        joinChurn: 10, durableWrites: 10_000,
        durableWindow: 10_000, durableSequentialWrites: 300, fanoutViews: 1_000, fanoutRelays: 4, fanoutUpdates: 20_000,
        fanoutIdleWindow: .seconds(1),
        collectionItems: 100_000, collectionUpdates: 5_000, failoverKills: 20, failoverViews: 10, pythonUpdates: 200_000
    )
}
