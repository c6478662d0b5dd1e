import ArgumentParser
import Foundation
import Logging
import StateBus
import StateBusCommandLine
import StateBusDemo
import StateBusRuntime
import ZeroMQ

/// `statebus load`: many independent views of one object in one process, to load a host or
/// relay the way many view processes would.
struct LoadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Run many independent views of one object in one process (load for tests and benchmarks).",
        discussion: """
            Each view is a replica of its own: its own sockets and view id, as if it ran in a \
            process of its own; views share I/O threads (--views-per-thread). Prints \
            "ready views=N elapsed-ms=…" once every view is live, then a status line every \
            --report-ms ("status live=… stale=… syncing=… min-sequence=… max-sequence=… \
            resyncs=… gaps=… reconnects=…"; a resync follows a sequence gap or a reconnection), \
            and a last one on SIGINT or SIGTERM. Exits 1 when the views are not \
            all live within --start-timeout. Lines read on standard input: "wait SEQ" prints \
            "reached sequence=SEQ at=NS" once every view has applied sequence SEQ (NS: \
            CLOCK_MONOTONIC nanoseconds); "all STATE" (live, stale, syncing, connecting) prints \
            "all STATE at=NS" once every view is in that state; "status" prints a status line.

            Hundreds of views share each I/O thread here, so they are patient with silence \
            (--missed-heartbeats, and 10 s a request) and queue little each (--queue-messages): \
            each holds at most --queue-messages publications behind a burst.

            Examples:
              statebus load --control ipc:///run/app/host.control --object Counter --views 1000
              statebus load --control ipc:///run/app/edge.control --object Counter --views 250 --report-ms 500
            """
    )

    @Option(name: .long, help: "The control endpoint of the host or relay (default: $STATEBUS_CONTROL).")
    var control: String?

    @Option(name: .long, help: "The object every view binds (default: $STATEBUS_OBJECT).")
    var object: String?

    @Option(name: .long, help: "How many views.")
    var views: Int = 100

    @Option(name: .long, help: "Views per I/O thread (each thread has a ZeroMQ context of its own, at most 1,023 sockets).")
    var viewsPerThread: Int = 200

    @Option(name: .long, help: "Seconds to wait for every view to be live.")
    var startTimeout: Int = 120

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Publications each view's socket queues before it stops reading (ReplicaLimits.updatesQueueMessages).",
            discussion:
                "Most of what a view costs in memory when it falls behind: a few hundred bytes per publication of small changes. A view process of its own has 100,000; hundreds in one process share its memory, hence 1,000 by default here."
        ))
    var queueMessages: Int = 1_000

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Heartbeat intervals a view may miss before it calls its host lost and reconnects (ReplicaConfiguration.missedHeartbeatsBeforeStale).",
            discussion:
                "Hundreds of views share each I/O thread here, and on a busy machine a healthy view may wait seconds for its turn: a view process of its own misses 3; these miss 10 by default, so that starved views do not reconnect (and resync) in a storm."
        ))
    var missedHeartbeats: Int = 10

    @Option(name: .long, help: "Milliseconds between status lines; 0 prints none.")
    var reportMs: Int = 1000

    @OptionGroup var metrics: MetricsOptions

    func validate() throws {
        guard views > 0 else { throw ValidationError("--views must be at least 1, got \(views)") }
        guard (1...450).contains(viewsPerThread) else {
            throw ValidationError("--views-per-thread must be 1 to 450 (two sockets per view, 1,023 per context), got \(viewsPerThread)")
        }
        guard queueMessages > 0 else { throw ValidationError("--queue-messages must be at least 1, got \(queueMessages)") }
        guard missedHeartbeats > 0 else { throw ValidationError("--missed-heartbeats must be at least 1, got \(missedHeartbeats)") }
        guard startTimeout > 0, reportMs >= 0 else { throw ValidationError("--start-timeout must be positive and --report-ms not negative") }
    }

    func run() async throws {
        let stop = SignalTrap.stopSignals()
        let environment = ProcessInfo.processInfo.environment
        guard let control = control ?? environment[EnvironmentVariableName.control] else {
            throw ValidationError("no endpoint: pass --control ENDPOINT (a host's or relay's) or set STATEBUS_CONTROL")
        }
        guard let object = object ?? ConnectionOptions.injectedObject, !object.isEmpty else {
            throw ValidationError("no object: pass --object NAME or set STATEBUS_OBJECT")
        }
        let metricsEndpoint = try metrics.endpoint()
        metrics.serveInBackground(metricsEndpoint)
        let started = ContinuousClock.now
        var logger = Logger(label: "statebus.load")
        logger.logLevel = .error
        var loops: [IOLoop] = []
        var replicas: [Replica] = []
        defer {
            for replica in replicas { replica.close() }
            for loop in loops { loop.shutdown() }
        }
        let process = ProcessInfo.processInfo.processIdentifier
        for index in 0..<views {
            if index % viewsPerThread == 0 { loops.append(try IOLoop(context: try Context(), name: "statebus-load-\(loops.count)")) }
            var configuration = ReplicaConfiguration(nodeName: "load-\(index)", logger: logger)
            configuration.viewID = "load-\(process)-\(index)"
            configuration.limits.updatesQueueMessages = queueMessages
            configuration.missedHeartbeatsBeforeStale = missedHeartbeats
            // The same starvation makes an answer wait in the socket: 10 s a request (30 s of
            // silence before a reconnection) instead of a lone view's 2 s.
            configuration.requestTimeout = .seconds(10)
            replicas.append(try Replica(object: object, controlEndpoint: control, configuration: configuration, loop: loops.last!))
        }
        let all = replicas
        let deadline = started + .seconds(startTimeout)
        while !all.allSatisfy({ $0.connectionState == .live }) {
            guard ContinuousClock.now < deadline else {
                let live = all.filter { $0.connectionState == .live }.count
                let error = all.lazy.compactMap(\.lastError).first.map { ": \($0)" } ?? ""
                FileHandle.standardError.write(Data("statebus load: \(live) of \(views) views live after \(startTimeout) s\(error)\n".utf8))
                throw ExitCode(1)
            }
            try await Task.sleep(for: .milliseconds(5))  // a poll of many replicas' states, not synchronisation
        }
        emit("ready views=\(views) elapsed-ms=\((ContinuousClock.now - started).milliseconds)")
        let reporter = Task { [reportMs] in
            guard reportMs > 0 else { return }
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(reportMs))
                emit(Self.status(of: all))
            }
        }
        let waiter = Task.detached { await Self.answerWaits(of: all) }
        await stop.wait()
        reporter.cancel()
        waiter.cancel()
        emit(Self.status(of: all))
    }

    /// One status line: how many views are in each state, and how far they got.
    static func status(of replicas: [Replica]) -> String {
        var live = 0
        var stale = 0
        var syncing = 0
        var minimum = UInt64.max
        var maximum: UInt64 = 0
        var resyncs = 0
        var gaps = 0
        var reconnects = 0
        for replica in replicas {
            switch replica.connectionState {
            case .live: live += 1
            case .stale: stale += 1
            default: syncing += 1
            }
            let sequence = replica.sequence
            minimum = min(minimum, sequence)
            maximum = max(maximum, sequence)
            let statistics = replica.statistics
            resyncs += max(0, statistics.appliedSnapshots - 1)
            gaps += statistics.sequenceGaps
            reconnects += statistics.reconnections
        }
        return
            "status live=\(live) stale=\(stale) syncing=\(syncing) min-sequence=\(minimum) max-sequence=\(maximum) resyncs=\(resyncs) gaps=\(gaps) reconnects=\(reconnects)"
    }

    /// Answers `wait SEQ` lines from standard input once every view has applied SEQ, and
    /// `status` lines with a status line.
    static func answerWaits(of replicas: [Replica]) async {
        for await line in DemoNode.standardInputLines() {
            if line == "status" {
                emit(status(of: replicas))
                continue
            }
            let named = line.dropFirst("all ".count)
            if line.hasPrefix("all "), let state = [ConnectionState.connecting, .syncing, .live, .stale].first(where: { "\($0)" == named }) {
                while !Task.isCancelled, !replicas.allSatisfy({ $0.connectionState == state }) {
                    try? await Task.sleep(for: .milliseconds(1))  // a poll of many replicas, not synchronisation
                }
                emit("all \(state) at=\(MonotonicClock.now())")
                continue
            }
            let words = line.split(separator: " ")
            guard words.count == 2, words[0] == "wait", let target = UInt64(words[1]) else { continue }
            while !Task.isCancelled, !replicas.allSatisfy({ $0.sequence >= target }) {
                try? await Task.sleep(for: .microseconds(200))  // a poll of many replicas, not synchronisation
            }
            emit("reached sequence=\(target) at=\(MonotonicClock.now())")
        }
    }
}

extension Duration {
    /// Whole milliseconds.
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
