import Foundation
import Logging
import StateBus
import StateBusLaunch
import StateBusRuntime
import StateBusWire
import ZeroMQ

/// Update throughput: one property changed as fast as the host can, counted at every view.
///
/// StateBus: the host runs in the bench process and calls ``StateHost/update(_:to:at:in:)`` in
/// a tight loop; each view is a worker process holding a ``Replica``. Raw: the bench process
/// sends one XPUB message per update (sequence number + the same bytes StateBus puts on the
/// wire for the value) to the same number of SUB worker processes. A view's rate is its
/// update count over the time from the first send to its last update, on one machine-wide
/// clock.
struct ThroughputBench {
    /// One run's outcome.
    struct Outcome: Sendable {
        /// Updates per second at each view.
        var perView: [Double]
        /// Whether every view got every update, in order, with the right final value.
        var complete: Bool
        /// What went wrong, when not complete.
        var problems: [String]
        /// Snapshots the views applied after their join, all together: each is a view that
        /// fell further behind than its queue and resynchronised.
        var resyncs = 0

        /// The slowest view's rate.
        var slowest: Double { perView.min() ?? 0 }
        /// All views' rates together.
        var total: Double { perView.reduce(0, +) }

        /// The round whose slowest view is the median of the rounds' (the lower middle
        /// one for an even count), so that the figure is one a round had; `nil` for none.
        static func median(of rounds: [Outcome]) -> Outcome? { rounds.lowerMedian(by: \.slowest) }
    }

    let kind: PayloadKind
    let views: Int
    let updates: Int
    /// With CURVE keys on the host and every view (the "with keys" rows).
    var keyed = false
    /// Views and raw subscribers written in Python (clients/python and pyzmq), run on this
    /// interpreter, instead of this executable's Swift workers.
    var python: PythonClient? = nil

    static let viewTimeout: Duration = .seconds(300)

    /// The raw baseline's queue per subscriber, in messages; the StateBus host gets as many.
    static let rawQueueMessages = 100_000

    /// StateBus: a host in this process, `views` replica processes.
    func runStateBus() async throws -> Outcome {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        var configuration = HostConfiguration(
            name: "bench", controlEndpoint: folder.endpoint("host.control"), persistence: .disabled, logger: BenchLogger.quiet)
        let keys = keyed ? try BenchKeys(folder: folder) : nil
        configuration.security = keys?.host
        // The host publishes the burst faster than views on two cores apply it, and a view
        // that falls further behind than its queue resynchronises: a property of the
        // queue, not a lost update. The raw baseline's XPUB queues 100,000 messages per
        // subscriber and never loses one (ZMQ_XPUB_NODROP), so each view's queue here holds
        // as many publications: the bound in bytes allows 100,000 of the largest, which a
        // stream of small changes never comes near. Resyncs, if any, are counted.
        configuration.limits.subscriberQueueBytes = Self.rawQueueMessages * configuration.limits.maxPublicationBytes
        let host = try await StateHost(
            objects: [ObjectDefinition(ViewWorkers.object, properties: [PropertyDefinition("value", kind: kind.valueKind, default: kind.value(0))])],
            configuration: configuration
        )
        defer { host.stop() }
        let workers = WorkerGroup()
        defer { workers.terminateAll() }
        let processes = try (0..<views).map { index in
            try startWorker(
                workers, "view", ["--control", host.controlEndpoint, "--kind", kind.rawValue, "--count", "\(updates)"],
                environment: keys?.viewEnvironment ?? [:], name: "view \(index + 1)")
        }
        for process in processes { _ = try await WorkerGroup.line("ready", from: process, timeout: .seconds(120)) }
        let started = MonotonicClock.now()
        for index in 1...updates {
            try host.update("value", to: kind.value(index), in: ViewWorkers.object)
        }
        return try await collect(processes, started: started)
    }

    /// Raw libzmq: an XPUB in this process (on a thread of its own), `views` SUB processes.
    ///
    /// The XPUB has the same high-water mark as the host's (100,000) and `ZMQ_XPUB_NODROP`,
    /// so a slow subscriber slows the sender instead of losing messages: a loss-free
    /// baseline, as the StateBus figure must be.
    func runRaw() async throws -> Outcome {
        let folder = try ScratchFolder()
        defer { folder.remove() }
        let endpoint = folder.endpoint("raw.pub")
        let workers = WorkerGroup()
        defer { workers.terminateAll() }
        // The SUBs connect before the bind and retry by themselves until it appears.
        let processes = try (0..<views).map { index in
            try startWorker(workers, "raw-sub", ["--updates", endpoint, "--count", "\(updates)"], name: "raw sub \(index + 1)")
        }
        for process in processes { _ = try await WorkerGroup.line("ready", from: process, timeout: .seconds(120)) }
        let (subscribers, count, size) = (views, updates, 8 + kind.valueBytes)
        let started = try await onThreadOfItsOwn(named: "bench-raw-pub") {
            try Self.publish(endpoint: endpoint, subscribers: subscribers, count: count, size: size)
        }
        return try await collect(processes, started: started)
    }

    /// A view or raw subscriber: this executable's worker, or the Python client's
    /// (`python -m statebus._benchworker`, which takes the same role and options).
    private func startWorker(
        _ workers: WorkerGroup, _ role: String, _ arguments: [String], environment: [String: String] = [:], name: String
    ) throws -> NodeProcess {
        guard let python else { return try workers.start(role, arguments, environment: environment, name: name) }
        return try workers.startPython(python, role, arguments, environment: environment, name: "python \(name)")
    }

    /// Binds, waits until `subscribers` subscriptions have arrived, then sends `count`
    /// messages of `size` bytes carrying 1, 2, 3, … in their first 8 bytes.
    /// - Returns: the clock when the first message was sent.
    private static func publish(endpoint: String, subscribers: Int, count: Int, size: Int) throws -> UInt64 {
        let context = try Context()
        defer { context.terminate() }
        let publisher = try Socket(context: context, type: .xpub)
        try publisher.set(.sendHighWaterMark, Int32(rawQueueMessages))
        try publisher.set(.xpubNoDrop, true)
        try publisher.set(.xpubVerbose, true)
        try publisher.set(.linger, 10_000)
        try publisher.bind(endpoint)
        let poller = Poller()
        poller.add(publisher, events: .readable)
        var subscribed = 0
        let deadline = ContinuousClock.now + .seconds(60)
        while subscribed < subscribers {
            guard ContinuousClock.now < deadline else {
                throw BenchError("only \(subscribed) of \(subscribers) raw subscribers subscribed within 60 s")
            }
            guard try !poller.poll(timeout: .milliseconds(500)).isEmpty, let message = try publisher.tryReceive() else { continue }
            if message.bytes.first == 1 { subscribed += 1 }
        }
        var payload = [UInt8](repeating: 0x2A, count: size)
        let started = MonotonicClock.now()
        for sequence in 1...UInt64(count) {
            withUnsafeBytes(of: sequence) { payload.replaceSubrange(0..<8, with: $0) }
            try publisher.send(payload)
        }
        publisher.close()
        return started
    }

    private func collect(_ processes: [NodeProcess], started: UInt64) async throws -> Outcome {
        var outcome = Outcome(perView: [], complete: true, problems: [])
        for process in processes {
            let result = try await WorkerGroup.line("result", from: process, timeout: Self.viewTimeout)
            let end = result.uint("end") ?? started
            let seconds = Double(end &- started) / 1e9
            outcome.perView.append(seconds > 0 ? Double(updates) / seconds : 0)
            outcome.resyncs += result.int("resyncs") ?? 0
            if !result.bool("ok") {
                outcome.complete = false
                outcome.problems.append(
                    "\(process.name): applied \(result.fields["applied"] ?? "?") of \(updates), resyncs \(result.fields["resyncs"] ?? "?"), final value right: \(result.fields["final"] ?? "?")"
                )
            }
        }
        return outcome
    }
}

/// A logger for hosts the bench starts: warnings and errors only.
enum BenchLogger {
    static var quiet: Logger {
        var logger = Logger(label: "statebus.bench")
        logger.logLevel = .warning
        return logger
    }
}
