import Foundation
import Logging
import StateBus
import StateBusWire
import SwiftProtobuf
import ZeroMQ

/// Fuzzes a real in-process `StateHost` through its sockets, as a hostile peer would:
/// requests on its control socket from a few DEALERs, subscription frames from an XSUB on
/// its updates socket; and checks it after every batch of inputs.
///
/// The sockets are used from the thread that made them only (libzmq sockets are not
/// thread-safe); the host and the observing replica run on their own I/O threads.
final class HostTarget {
    static let maxMessageBytes = 64 * 1024
    let host: StateHost
    let folder: String
    private let context: Context
    private let dealers: [Socket]
    private var subscriber: Socket
    private let observer: Replica
    private let sentinelBefore: [String: Value]?
    private var checks = 0
    private(set) var replies: [String: Int] = [:]
    private(set) var blocked = 0
    /// The request id of this check's pings, and the fuzzing peers that got their pong.
    private var marker: UInt64 = 0
    private var pongs: Set<Int> = []
    /// What the host logged, by gist: the refusals the inputs reached.
    private let logCounts: LogCounter.Counts

    /// How many distinct reply kinds and log gists the inputs reached (cheap, see ``reached``).
    var reachedCount: Int { replies.count + logCounts.distinct }

    /// The reply kinds (`reply.<kind>`) and log gists (`log.<gist>`) the inputs reached, the
    /// novelty keys of ``CorpusGrower``.
    var reached: Set<String> {
        Set(replies.keys.map { "reply.\($0)" }).union(logCounts.snapshot.keys.map { "log.\($0)" })
    }

    init() async throws {
        folder = try FuzzSupport.temporaryFolder("sbfuzz-host")
        var quiet = Logger(label: "statebus.fuzz.host")
        quiet.logLevel = .critical
        // Counted, not printed: the gists say which refusals the inputs reached.
        let counts = LogCounter.Counts()
        logCounts = counts
        host = try await StateHost(
            objects: FuzzObjects.all,
            configuration: HostConfiguration(
                name: "fuzz", controlEndpoint: "ipc://\(folder)/control", heartbeatInterval: .milliseconds(200),
                maxMessageBytes: Self.maxMessageBytes, persistence: .file("\(folder)/state.sqlite"),
                logger: Logger(label: "statebus.fuzz.host") { _ in LogCounter(counts: counts) }
            ))
        let context = try Context()
        let controlEndpoint = host.controlEndpoint
        self.context = context
        dealers = try (0..<4).map { _ in
            let dealer = try Socket(context: context, type: .dealer)
            try dealer.set(.linger, 0)
            try dealer.connect(controlEndpoint)
            return dealer
        }
        subscriber = try Self.subscriber(context: context, endpoint: host.updatesEndpoint)
        var replicaConfiguration = ReplicaConfiguration(nodeName: "fuzz-observer")
        replicaConfiguration.logger = quiet
        observer = try Replica(object: "Target", controlEndpoint: host.controlEndpoint, configuration: replicaConfiguration)
        try await observer.waitUntilLive(timeout: .seconds(20))
        sentinelBefore = host.values(of: "Sentinel")
    }

    private static func subscriber(context: Context, endpoint: String) throws -> Socket {
        let socket = try Socket(context: context, type: .xsub)
        try socket.set(.linger, 0)
        try socket.connect(endpoint)
        return socket
    }

    /// Sends one input without waiting for its answer, then reads whatever has arrived.
    func send(_ input: FuzzInput, index: Int) throws {
        guard !input.frames.isEmpty else { return }
        let socket = input.channel == .subscription ? subscriber : dealers[index % dealers.count]
        if try !socket.send(multipart: input.frames, wait: false) {
            // A full queue: read replies for a moment (the host stops answering a peer that
            // does not read), then give up on this input rather than block the run.
            try drain(timeout: .milliseconds(200))
            if try !socket.send(multipart: input.frames, wait: false) { blocked += 1 }
        }
        try drain(timeout: nil)
    }

    /// Reads every reply and publication that has arrived; each reply must be a valid one.
    private func drain(timeout: Duration?) throws {
        if let timeout {
            let poller = Poller()
            for dealer in dealers { _ = poller.add(dealer, events: .readable) }
            _ = try poller.poll(timeout: timeout)
        }
        for (index, dealer) in dealers.enumerated() {
            while let message = try dealer.tryReceive() {
                guard let reply = try? Statebus_V1_Reply(serializedBytes: message.bytes), StateBusProtocol.versions.contains(reply.protocolVersion)
                else {
                    throw Finding("the host sent a reply that is not a version-1 or version-2 Reply: \(message.bytes.prefix(64))")
                }
                if reply.requestID == marker, reply.pong.epoch == host.epoch { pongs.insert(index) }
                replies[Self.kind(of: reply), default: 0] += 1
            }
        }
        while try subscriber.tryReceiveMultipart() != nil { replies["publication", default: 0] += 1 }
    }

    private static func kind(of reply: Statebus_V1_Reply) -> String {
        switch reply.body {
        case .welcome: "welcome"
        case .snapshotChunk, .snapshotPart: "snapshot"
        case .writeReply(let write): write.accepted ? "accepted" : "rejected"
        case .error(let error): "error.\(error.code)"
        case .pong: "pong"
        case .viewList: "views"
        case .callReply(let call): call.ok ? "called" : "call.\(call.error.code)"
        case nil: "empty"
        }
    }

    /// The invariants: the host answers a ping on every fuzzing connection (so it has
    /// handled everything sent before) and a ping and a hello on a fresh one, within a
    /// deadline; `Sentinel` is unchanged; every sequence of `Target` is an accepted write;
    /// the observing replica converges on the host's state.
    func check() throws {
        checks += 1
        marker = 0xF0F0_0000_0000_0000 + UInt64(checks)
        pongs = []
        let probe = try Socket(context: context, type: .dealer)
        defer { probe.close() }
        try probe.set(.linger, 0)
        try probe.connect(host.controlEndpoint)
        var ping = Statebus_V1_Request()
        ping.protocolVersion = StateBusProtocol.version
        ping.requestID = marker
        ping.ping = Statebus_V1_Ping()
        let pingBytes: [UInt8] = try ping.serializedBytes()
        var hello = ping
        hello.hello = Statebus_V1_Hello()
        hello.hello.viewID = "fuzz-probe-\(checks)"
        let deadline = ContinuousClock.now + .seconds(10)
        for dealer in dealers + [probe] { try sendPatiently(pingBytes, on: dealer, until: deadline) }
        try sendPatiently(try hello.serializedBytes(), on: probe, until: deadline)
        var probeAnswers: Set<String> = []
        let poller = Poller()
        _ = poller.add(probe, events: .readable)
        for dealer in dealers { _ = poller.add(dealer, events: .readable) }
        while pongs.count < dealers.count || probeAnswers.count < 2, ContinuousClock.now < deadline {
            _ = try poller.poll(timeout: .milliseconds(50))
            try drain(timeout: nil)
            while let message = try probe.tryReceive() {
                let reply = try Statebus_V1_Reply(serializedBytes: message.bytes)
                if reply.pong.epoch == host.epoch { probeAnswers.insert("pong") }
                if reply.welcome.objects.map(\.name) == ["Target", "Sentinel"] { probeAnswers.insert("welcome") }
            }
        }
        guard pongs.count == dealers.count, probeAnswers.count == 2 else {
            throw Finding(
                "the host did not answer within 10 s: pongs on \(pongs.count) of \(dealers.count) fuzzing connections; fresh connection got \(probeAnswers.sorted())"
            )
        }

        guard host.values(of: "Sentinel") == sentinelBefore, host.sequence(of: "Sentinel") == 0 else {
            throw Finding(
                "Sentinel changed: \(FuzzSupport.differences(host.values(of: "Sentinel") ?? [:], sentinelBefore ?? [:])), sequence \(host.sequence(of: "Sentinel") ?? 0)"
            )
        }
        // Everything sent has been handled (every connection got its pong): the host's state
        // must hold still from here, and every sequence must be an accepted write.
        let sequence = host.sequence(of: "Target") ?? 0
        let accepted = host.statistics.writesAccepted
        guard sequence == UInt64(accepted) else {
            throw Finding("Target is at sequence \(sequence) but the host accepted \(accepted) writes")
        }
        // Up to 10 s to catch up; but once at the host's sequence its values are final, so
        // a difference that lasts a second there is a divergence, not lag.
        var caughtUp: ContinuousClock.Instant?
        while ContinuousClock.now < deadline + .seconds(10) {
            let (state, hostSequence, hostValues) = (observer.consistentState, host.sequence(of: "Target") ?? 0, host.values(of: "Target") ?? [:])
            if state.sequence == hostSequence {
                if FuzzSupport.same(state.values, hostValues) { break }
                caughtUp = caughtUp ?? .now
                if let caughtUp, ContinuousClock.now - caughtUp > .seconds(1) { break }
            }
            try drain(timeout: .milliseconds(20))
        }
        let (state, hostSequence, hostValues) = (observer.consistentState, host.sequence(of: "Target") ?? 0, host.values(of: "Target") ?? [:])
        let nowAccepted = host.statistics.writesAccepted
        guard hostSequence == sequence, nowAccepted == accepted else {
            throw Finding(
                "Target moved with no input in flight: sequence \(sequence) -> \(hostSequence), accepted writes \(accepted) -> \(nowAccepted) after every connection had its pong"
            )
        }
        guard state.sequence == hostSequence, FuzzSupport.same(state.values, hostValues) else {
            throw Finding(
                "the observing replica did not converge: replica at \(state.sequence) (\(state.connection)), host at \(hostSequence); differs in \(FuzzSupport.differences(state.values, hostValues))"
            )
        }
    }

    /// After a known finding: the observing replica resynchronises from the host, so the
    /// next check starts from agreement.
    func recover() async throws {
        observer.reconnect()
        try await observer.waitUntilLive(timeout: .seconds(20))
    }

    /// Sends `bytes`, reading replies while the queue is full (a blocking send could wait
    /// forever on a host that stopped reading us, and the deadline is the finding).
    private func sendPatiently(_ bytes: [UInt8], on socket: Socket, until deadline: ContinuousClock.Instant) throws {
        while try !socket.send(bytes, wait: false) {
            guard ContinuousClock.now < deadline else { throw Finding("the host has not read a connection's queue for 10 s") }
            try drain(timeout: .milliseconds(50))
        }
    }

    /// Reconnects the subscription socket, so the host can forget its subscriptions.
    func renewSubscriber() throws {
        subscriber.close()
        subscriber = try Self.subscriber(context: context, endpoint: host.updatesEndpoint)
    }

    func close() {
        for dealer in dealers { dealer.close() }
        subscriber.close()
        observer.close()
        host.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
