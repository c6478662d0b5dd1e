import Foundation
import Logging
import StateBus
import StateBusWire
import SwiftProtobuf
import ZeroMQ

/// Fuzzes a real `Replica`, which speaks protocol version 2, through a stand-in host
/// (``StandInHost``): a ROUTER that answers its requests (welcomes with property tables,
/// snapshots in parts, writes) and an XPUB that publishes join markers, the runs of the
/// writes it accepts, and the fuzzer's publications; the fuzzer's replies go out on the
/// ROUTER to the replica's connection.
///
/// The check: a heartbeat of a new epoch (a host restart, sometimes with its objects in
/// another order) must bring the replica, whatever garbage it took, back to the stand-in's
/// truth (hello, join, snapshot; its writes answered) within a deadline.
final class ReplicaTarget {
    /// The replica's `maxIncomingMessageBytes`. libzmq drops a connection that sends more,
    /// for good (a protocol error: no reconnection); the replica then hears no heartbeat and
    /// makes a new connection itself.
    static let maxMessageBytes = 8 << 20
    let folder: String
    private let context: Context
    private let control: Socket
    private let updates: Socket
    private let replica: Replica
    private var host: StandInHost
    private var generator: PublicationGenerator
    private var replicaIdentity: [UInt8]?
    /// Observes the replica's changes in half the runs, so that both of its paths run: names
    /// collected for observers, and none when nobody observes.
    private let observer: Task<Void, Never>?
    private var localWrites = 0
    /// When the stand-in publishes its next heartbeat (every announced interval, as a host).
    private var nextHeartbeat = ContinuousClock.now
    private let logCounts: LogCounter.Counts
    /// Inputs and answers the stand-in's sockets would not take at once (a full queue):
    /// dropped, as on a lossy link, and reported with the run's figures.
    private(set) var unsent = 0

    /// What the stand-in served, the replica was made to do and did, for the progress lines.
    var served: [String: Int] {
        let done = replica.statistics
        return host.served.merging([
            "local.write": localWrites, "r.applied": done.appliedUpdates, "r.snapshots": done.appliedSnapshots, "r.gaps": done.sequenceGaps,
            "r.reconnects": done.reconnections, "r.rejoins": done.restartedJoins
        ]) { $1 }
    }

    init(corpus: [FuzzInput], using random: inout SeededRandom) throws {
        folder = try FuzzSupport.temporaryFolder("sbfuzz-replica")
        context = try Context()
        control = try Socket(context: context, type: .router)
        updates = try Socket(context: context, type: .xpub)
        try control.set(.linger, 0)
        try updates.set(.linger, 0)
        try updates.set(.xpubVerbose, true)
        try updates.set(.sendHighWaterMark, 100_000)
        _ = try control.bind("ipc://\(folder)/control")
        _ = try updates.bind("ipc://\(folder)/updates")
        var configuration = ReplicaConfiguration(nodeName: "fuzz-replica", requestTimeout: .milliseconds(500), writeTimeout: .seconds(3))
        // Counted, not printed: the counts say which refusals and recoveries the inputs reached.
        let counts = LogCounter.Counts()
        configuration.logger = Logger(label: "statebus.fuzz.replica") { _ in LogCounter(counts: counts) }
        logCounts = counts
        // A small join buffer, so that large runs during a join restart it now and then.
        configuration.limits = ReplicaLimits(maxIncomingMessageBytes: Self.maxMessageBytes, maxJoinBufferBytes: 1 << 20)
        let replica = try Replica(object: FuzzObjects.target.name, controlEndpoint: "ipc://\(folder)/control", configuration: configuration)
        self.replica = replica
        let truth = StandInTruth(epoch: UInt64.random(in: 1...UInt64.max, using: &random))
        // Parts of a host's size in half the runs, of a few properties in the other half.
        let partLimit = random.oneIn(2) ? 4 << 20 : Int.random(in: 16...256, using: &random)
        host = StandInHost(truth: truth, endpoint: "ipc://\(folder)/updates", viewID: replica.viewID, partLimit: partLimit)
        generator = PublicationGenerator(corpus: corpus, viewID: replica.viewID, endpoint: "ipc://\(folder)/updates")
        observer = random.oneIn(2) ? Task { for await _ in replica.changes {} } : nil
    }

    /// How many distinct log gists and served kinds the inputs reached (cheap, see ``reached``).
    var reachedCount: Int { logCounts.distinct + host.served.count }

    /// The log gists (`log.<gist>`) and what the stand-in served (`served.<kind>`), the
    /// novelty keys of ``CorpusGrower``.
    var reached: Set<String> {
        Set(logCounts.snapshot.keys.map { "log.\($0)" }).union(host.served.keys.map { "served.\($0)" })
    }

    /// What the replica logged, by gist and most frequent first: the paths the inputs reached.
    var logSummary: String {
        logCounts.snapshot.sorted { $0.value > $1.value }.map { "\($0.value)x \($0.key)" }.joined(separator: "\n  ")
    }

    /// Serves the replica until it is live (at most 10 s), so that the first inputs reach a
    /// replica that applies them rather than one still joining (a replay of a short crash
    /// file needs that).
    func settle() throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, !agrees() { try serve(timeout: .milliseconds(20)) }
    }

    /// The next generated input (it may move the truth on).
    func generate(using random: inout SeededRandom) -> FuzzInput {
        generator.next(host: &host, live: replica.connectionState == .live, using: &random)
    }

    /// Sends one input, then serves whatever the replica asked.
    func send(_ input: FuzzInput) throws {
        // Fuzz inputs the sockets will not take are dropped on purpose, as on a lossy link
        // (counted in `unsent`): the harness tests what the replica makes of what arrives.
        switch input.channel {
        case .publication where !input.frames.isEmpty:
            count(try updates.send(multipart: input.frames, wait: false))
        case .reply where !input.frames.isEmpty:
            guard let replicaIdentity else { break }
            if let last = input.frames.last, WelcomeGenerator.mayMislead(last, truth: host.truth) { host.schemaSuspect = true }
            count(try control.send(multipart: [replicaIdentity] + input.frames, wait: false))
        case .localWrite:
            guard let frame = input.frames.first, let write = frame.withUnsafeBytes(WriteCodec.decodeWrite) else { break }
            replica.write(write.changes)
            localWrites += 1
        default:
            break
        }
        for output in host.tick() { try emit(output) }
        try serve(timeout: nil)
    }

    /// Publishes a heartbeat when one is due, every `interval`.
    private func heartbeat(every interval: Duration) throws {
        guard ContinuousClock.now >= nextHeartbeat else { return }
        count(try updates.send(multipart: [Array("hb".utf8) + [0], try host.heartbeat()], wait: false))
        nextHeartbeat = ContinuousClock.now + interval
    }

    /// Counts a send the socket did not take.
    private func count(_ sent: Bool) {
        if !sent { unsent += 1 }
    }

    /// Answers the replica's requests and subscriptions, as a host would.
    private func serve(timeout: Duration?) throws {
        try heartbeat(every: .milliseconds(Int(WelcomeGenerator.heartbeatIntervalMs)))
        if let timeout {
            let poller = Poller()
            _ = poller.add(control, events: .readable)
            _ = poller.add(updates, events: .readable)
            _ = try poller.poll(timeout: timeout)
        }
        while let frames = try control.tryReceiveMultipart() {
            guard frames.count == 2 else { throw Finding("the replica sent a request of \(frames.count - 1) frames; a request is one") }
            replicaIdentity = frames[0].bytes
            for output in try host.answer(frames[1].bytes) { try emit(output) }
        }
        while let message = try updates.tryReceive() {
            if let output = try host.subscription(message.bytes) { try emit(output) }
        }
    }

    private func emit(_ output: StandInHost.Output) throws {
        switch output {
        case .reply(let bytes):
            if let replicaIdentity { count(try control.send(multipart: [replicaIdentity, bytes], wait: false)) }
        case .publication(let topic, let body):
            count(try updates.send(multipart: [topic, body], wait: false))
        }
    }

    /// A new epoch (a restart, its objects now and then in another order), announced by
    /// heartbeat every 200 ms (in case the replica is between subscriptions; one that lost
    /// its subscription reconnects for the silence): the replica must come back live with
    /// exactly the truth, values and versions, with no write of its own left unanswered.
    func check(using random: inout SeededRandom) throws {
        host.truth.restart(epoch: UInt64.random(in: 1...UInt64.max, using: &random), reordered: random.oneIn(4))
        host.mayHold = false
        defer { host.mayHold = true }
        for output in host.tick() { try emit(output) }
        let checkStart = logCounts.elapsed
        let servedBefore = host.served
        let deadline = ContinuousClock.now + .seconds(10)
        nextHeartbeat = ContinuousClock.now
        while ContinuousClock.now < deadline {
            try heartbeat(every: .milliseconds(200))
            try serve(timeout: .milliseconds(20))
            if agrees() {
                // The replica holds the truth's schema now: welcomes may leave it out again.
                host.schemaSuspect = false
                return
            }
        }
        let state = replica.consistentState
        let truth = host.truth
        throw Finding(
            "the replica did not resync within 10 s: epoch \(state.epoch == truth.epoch ? "new" : "old"), \(state.connection), sequence \(state.sequence) vs \(truth.sequence), \(replica.pendingWriteCount) writes pending; differs in \(FuzzSupport.differences(state.values, truth.byName))\(versionDifferences()); the stand-in served during the check \(host.served.filter { servedBefore[$0.key] != $0.value }.map { "\($0.key)=\($0.value - (servedBefore[$0.key] ?? 0))" }.sorted()), truth sizes \(truth.values.map(\.encodedSizeBound)); the replica's last log lines (check began \(checkStart)):\n    \(logCounts.recent.joined(separator: "\n    "))"
        )
    }

    /// Whether the replica is live at the truth's epoch and sequence with its values and
    /// versions and no write pending.
    private func agrees() -> Bool {
        let state = replica.consistentState
        let truth = host.truth
        guard state.epoch == truth.epoch, state.connection == .live, state.sequence == truth.sequence, replica.pendingWriteCount == 0,
            FuzzSupport.same(state.values, truth.byName)
        else { return false }
        return versionDifferences().isEmpty
    }

    /// The properties whose version differs from the truth's, for a finding's message.
    private func versionDifferences() -> String {
        let truth = host.truth
        let differing = StandInTruth.names.indices.filter { replica.version(of: StandInTruth.names[$0]) != truth.versions[$0] }
        guard !differing.isEmpty else { return "" }
        return "; versions differ: "
            + differing.map {
                "\(StandInTruth.names[$0]) \(replica.version(of: StandInTruth.names[$0]).map(String.init) ?? "none") vs \(truth.versions[$0])"
            }
            .joined(separator: ", ")
    }

    func close() {
        observer?.cancel()
        replica.close()
        control.close()
        updates.close()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
