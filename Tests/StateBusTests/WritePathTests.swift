import Foundation
@_spi(Testing) import StateBus
import StateBusRuntime
import StateBusWire
import Synchronization
import Testing
import ZeroMQ

/// The write path under load and faults: every write reaches the host or fails with a typed
/// error that rolls it back; no wait is without a deadline.
@Suite("Write path: nothing lost, nothing stuck")
struct WritePathTests {
    static func replica(of host: StateHost, _ configuration: ReplicaConfiguration = ReplicaConfiguration()) async throws -> Replica {
        let replica = try Replica(object: "SharedData", controlEndpoint: host.controlEndpoint, configuration: configuration)
        try await replica.waitUntilLive(timeout: .seconds(20))
        return replica
    }

    /// A host whose view ids stay bound to a silent connection for 60 s: anything a test
    /// sees sooner is not the lease's doing.
    static func hostWithLongLease() async throws -> StateHost {
        let folder = Fixtures.temporaryFolder()
        var configuration = HostConfiguration(name: "ids", controlEndpoint: "ipc://\(folder)/control", persistence: .disabled)
        configuration.viewIDLease = .seconds(60)
        return try await StateHost(objects: [Fixtures.sharedData], configuration: configuration)
    }

    /// Awaits a receipt's verdict, failing the test (instead of hanging it) at the deadline.
    static func verdict(_ receipt: WriteReceipt, within timeout: Duration = .seconds(60)) async throws -> Result<UInt64, StateBusError> {
        let verdict = try await withDeadline(timeout) { () -> Result<UInt64, StateBusError> in
            do { return .success(try await receipt.accepted()) } catch let error as StateBusError { return .failure(error) }
        }
        guard let verdict else { throw StateBusError(.timeout, "write \(receipt.writeID) got no verdict within \(timeout)") }
        return verdict
    }

    @Test("a write to a closed replica whose loop other replicas still use fails at once as closed, and makes no change")
    func writeAfterCloseOnASharedLoop() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        let loop = try IOLoop(context: try Context())
        defer { loop.shutdown() }
        let closing = try Replica(object: "SharedData", controlEndpoint: host.controlEndpoint, loop: loop)
        let staying = try Replica(object: "SharedData", controlEndpoint: host.controlEndpoint, loop: loop)
        defer { staying.close() }
        try await closing.waitUntilLive(timeout: .seconds(20))
        try await staying.waitUntilLive(timeout: .seconds(20))
        closing.close()
        // Before, the write was queued on the live loop, where nothing sent or expired it.
        guard case .failure(let error) = try await Self.verdict(closing.write("sharedText", to: "after close"), within: .seconds(20)) else {
            Issue.record("a write to a closed replica was accepted")
            return
        }
        #expect(error.code == .closed)
        await #expect(throws: StateBusError.self) {
            try await closing.write([PropertyChange("sharedText", to: "after close")], waitingUpTo: .seconds(5))
        }
        _ = try await staying.write("sharedText", to: "still served").accepted()
        #expect(host.value(of: "sharedText", in: "SharedData") == "still served")
    }

    @Test("a replica dropped without close on a shared loop says goodbye, and the loop and the other replicas carry on")
    func droppedReplicaOnASharedLoop() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        let loop = try IOLoop(context: try Context())
        defer { loop.shutdown() }
        let staying = try Replica(object: "SharedData", controlEndpoint: host.controlEndpoint, loop: loop)
        defer { staying.close() }
        try await staying.waitUntilLive(timeout: .seconds(20))
        var configuration = ReplicaConfiguration(nodeName: "dropped")
        configuration.viewID = "dropped-\(UUID().uuidString)"
        do {
            let dropped = try Replica(object: "SharedData", controlEndpoint: host.controlEndpoint, configuration: configuration, loop: loop)
            try await dropped.waitUntilLive(timeout: .seconds(20))
        }
        // Its engine is closed on the loop (before, it was freed with its liveness timer still
        // on the loop, which crashed the process at the next tick): the host hears its goodbye,
        // well before the view-id lease (10 s) would have dropped it.
        let deadline = ContinuousClock.now + .seconds(5)
        while try await ConnectedView.list(controlEndpoint: host.controlEndpoint).views.contains(where: { $0.viewID == configuration.viewID }) {
            guard ContinuousClock.now < deadline else {
                Issue.record("the host still lists the dropped replica after 5 s: it did not say goodbye")
                return
            }
            try await Task.sleep(for: .milliseconds(50))  // between two questions to the host
        }
        _ = try await staying.write("sharedText", to: "after the drop").accepted()
        #expect(staying["sharedText"] == "after the drop")
    }

    @Test("a view restarted with its view id that repeats its predecessor's first write has it applied, not taken for a copy")
    func restartedViewRepeatsAWrite() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        var configuration = ReplicaConfiguration(nodeName: "pinned-id")
        configuration.viewID = "pinned-\(UUID().uuidString)"
        let first = try await Self.replica(of: host, configuration)
        _ = try await first.write("sharedText", to: "mine").accepted()
        first.close()
        let other = try await Self.replica(of: host)
        defer { other.close() }
        _ = try await other.write("sharedText", to: "theirs").accepted()

        // The same view id, and the same first write: before, its write id was 1 again, and
        // the host answered it as a copy of the first process's write and applied nothing.
        let restarted = try await Self.replica(of: host, configuration)
        defer { restarted.close() }
        _ = try await restarted.write("sharedText", to: "mine").accepted()
        #expect(host.value(of: "sharedText", in: "SharedData") == "mine")
    }

    @Test("a burst of 10,000 writes, far past the socket's queue, is acknowledged write by write")
    func burstIsAcknowledged() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        // Patient, as the burst test below: queueing 10,000 writes behind a paused host on a
        // slow machine must not make the view join again or time the last writes out.
        let replica = try await Self.replica(
            of: host, ReplicaConfiguration(missedHeartbeatsBeforeStale: 600, requestTimeout: .seconds(60), writeTimeout: .seconds(300)))
        defer { replica.close() }
        // The host holds still while the burst queues up, as a busy host would.
        let resume = await host.pauseLoopForTesting()
        let receipts = (1...10_000).map { replica.write("counter", to: .int(Int64($0))) }
        resume()
        var accepted = 0
        for receipt in receipts {
            if case .success = try await Self.verdict(receipt) { accepted += 1 }
        }
        print("write burst: 10000 written, \(accepted) acknowledged, host accepted \(host.statistics.writesAccepted)")
        #expect(accepted == 10_000)
        #expect(host.value(of: "counter", in: "SharedData") == 10_000)
        // An acknowledged write stays pending until its echo is applied.
        try await replica.waitFor(timeout: .seconds(20), "every echo") { $0.pendingWriteCount == 0 && $0["counter"] == 10_000 }
    }

    @Test("writes that arrive together share publications, as PROTOCOL.md section 6 says (up to 512 batches in one)")
    func burstSharesPublications() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        // Patient with a silent host: on a loaded machine the host stays paused for seconds
        // below, and a replica that took that for a lost host would reconnect and send again.
        let replica = try await Self.replica(
            of: host, ReplicaConfiguration(missedHeartbeatsBeforeStale: 600, requestTimeout: .seconds(60), writeTimeout: .seconds(300)))
        defer { replica.close() }
        let before = host.statistics.publications
        // Queued while the host holds still, the writes arrive together: the host goes on
        // only once the replica's loop has handed every one to its socket (on a loaded
        // machine that loop may take longer than the test thread's 1,000 calls).
        let resume = await host.pauseLoopForTesting()
        let receipts = (1...1_000).map { replica.write("counter", to: .int(Int64($0))) }
        // Polled: nothing observable changes when the loop hands a write to its socket.
        let sentBy = ContinuousClock.now + .seconds(20)
        while replica.hasUnsentWrites, ContinuousClock.now < sentBy { try? await Task.sleep(for: .milliseconds(2)) }
        let allSent = !replica.hasUnsentWrites
        resume()
        try #require(
            allSent,
            "the replica's loop did not hand 1,000 writes to its socket within 20 s: state \(replica.connectionState), \(replica.statistics.reconnections) reconnections, last error \(String(describing: replica.lastError))"
        )
        for receipt in receipts { _ = try await receipt.accepted() }
        let publications = host.statistics.publications - before
        print("write burst: 1000 batches in \(publications) publications")
        // 1,000 batches need at least 2 publications; heartbeats may add a few.
        #expect(publications < 100, "1,000 batches took \(publications) publications")
    }

    @Test("a write the host never answers fails with timeout, shows the host's value again, and converges later")
    func writeDeadline() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        var configuration = ReplicaConfiguration(writeTimeout: .milliseconds(300))
        configuration.nodeName = "deadline"
        let replica = try await Self.replica(of: host, configuration)
        defer { replica.close() }
        let resume = await host.pauseLoopForTesting()
        let receipt = replica.write("sharedText", to: "late")
        #expect(replica["sharedText"] == "late")
        let verdict = try await Self.verdict(receipt)
        guard case .failure(let error) = verdict else {
            Issue.record("expected a timeout, got \(verdict)")
            resume()
            return
        }
        #expect(error.code == .timeout)
        #expect(error.message.contains("writeTimeout"))
        #expect(replica["sharedText"] == "")
        // The host handles the write after all (when the view sent it before its deadline;
        // on a loaded machine it may expire unsent): either way the view ends with the
        // host's value. A later write on the same connection is handled after it, so once
        // that one is answered the host's value is final.
        resume()
        let barrier = replica.write("counter", to: .int(1))
        #expect(try await Self.verdict(barrier).isSuccess)
        let late: Value = .string("late")
        let untouched: Value = .string("")
        let final: Value = host.value(of: "sharedText", in: "SharedData") ?? .null
        let expected = [late, untouched].contains(final)
        #expect(expected, "the host holds the late write or nothing, got \(final)")
        try await replica.waitFor(timeout: .seconds(20), "the host's value") { $0["sharedText"] == final }
    }

    @Test("a full write queue refuses at once with overloaded; write(_:waitingUpTo:) waits for room")
    func backPressure() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        // Writes that never time out here: a test thread held up past a 30 s writeTimeout on
        // a loaded machine saw the queued writes expire, which made room the test did not
        // expect and failed them.
        let replica = try await Self.replica(
            of: host, ReplicaConfiguration(missedHeartbeatsBeforeStale: 60, writeTimeout: .seconds(600), maxQueuedWrites: 3))
        defer { replica.close() }
        let resume = await host.pauseLoopForTesting()
        let first = (1...3).map { replica.write("counter", to: .int(Int64($0))) }
        let refused = replica.write("counter", to: 4)
        guard case .failure(let error)? = refused.result else {
            Issue.record("the fourth write was not refused at once")
            resume()
            return
        }
        #expect(error.code == .overloaded)
        #expect(error.message.contains("maxQueuedWrites 3"))
        #expect(replica["counter"] == 3, "a refused write never shows")
        await #expect(throws: StateBusError.self) {
            _ = try await replica.write([PropertyChange("counter", to: 5)], waitingUpTo: .milliseconds(200))
        }
        let waiting = Task { try await replica.write([PropertyChange("counter", to: 6)], waitingUpTo: .seconds(60)) }
        resume()
        for receipt in first { #expect(try await Self.verdict(receipt).isSuccess) }
        let late = try await waiting.value
        #expect(try await Self.verdict(late).isSuccess)
        #expect(host.value(of: "counter", in: "SharedData") == 6)
    }

    @Test("the echo of a write confirms it when the host's reply is lost")
    func echoConfirms() async throws {
        let host = try await Fixtures.host()
        defer { host.stop() }
        let replica = try await Self.replica(of: host)
        defer { replica.close() }
        host.dropNextRepliesForTesting(1)
        let receipt = replica.write("sharedText", to: "echoed")
        guard case .success(let sequence) = try await Self.verdict(receipt) else {
            Issue.record("the write was not confirmed")
            return
        }
        #expect(sequence == host.sequence(of: "SharedData"))
        #expect(replica.pendingWriteCount == 0)
    }

    @Test("a view id belongs to the connection that said hello; the same replica reconnecting keeps it")
    func viewIDIsBound() async throws {
        let host = try await Self.hostWithLongLease()
        defer { host.stop() }
        var owner = ReplicaConfiguration()
        owner.viewID = "view-1"
        let first = try await Self.replica(of: host, owner)
        defer { first.close() }

        // Another connection naming the same view id is refused, and the owner goes on.
        let impostor = try Replica(object: "SharedData", controlEndpoint: host.controlEndpoint, configuration: owner)
        defer { impostor.close() }
        try await impostor.waitFor(timeout: .seconds(20), "the refusal") { $0.lastError?.code == .viewIDInUse }
        #expect(impostor.connectionState != .live)
        #expect(impostor.lastError?.message.contains("view-1") == true)
        let context = try Context()
        let raw = try RawClient(context: context, endpoint: host.controlEndpoint)
        var write = Statebus_V1_WriteRequest()
        write.object = "SharedData"
        write.writeID = 1
        write.viewID = "view-1"
        var change = Statebus_V1_Change()
        change.property = "sharedText"
        change.value = Value.string("stolen").wire
        write.changes = [change]
        try raw.send(RawClient.request(.write(write)))
        let reply = try #require(try raw.reply())
        #expect(reply.writeReply.rejection.code == .viewIDInUse)
        #expect(host.value(of: "sharedText", in: "SharedData") == "")
        #expect(try await Self.verdict(first.write("sharedText", to: "mine")).isSuccess)

        // The owner reconnecting (a new connection) shows its token and is let back in at once,
        // long before the lease would free the id.
        first.reconnect()
        try await first.waitUntilLive(timeout: .seconds(20))
        #expect(try await Self.verdict(first.write("sharedText", to: "still mine")).isSuccess)
    }

    @Test("a view id whose connection closed without a goodbye is free at once, not after the lease")
    func goneHolderFreesItsViewID() async throws {
        let host = try await Self.hostWithLongLease()
        defer { host.stop() }
        let context = try Context()
        let holder = try RawClient(context: context, endpoint: host.controlEndpoint)
        try holder.hello(as: "view-1")

        // While the holder's connection is there, another connection is refused; the host's
        // question to the holder is a pong answering no request, which clients ignore.
        let impostor = try RawClient(context: context, endpoint: host.controlEndpoint)
        var hello = Statebus_V1_Hello()
        hello.viewID = "view-1"
        try impostor.send(RawClient.request(id: 1, .hello(hello)))
        #expect(try impostor.reply()?.error.code == .viewIDInUse)
        let probe = try #require(try holder.reply())
        #expect(probe.requestID == 0)
        #expect(probe.pong.epoch == host.epoch)

        // The holder closes its connection without a goodbye, as a crashed view does (or one
        // that closed a connection before reading its welcome). A view naming its id is
        // welcomed at once: the lease (60 s) would outlast the deadline.
        try holder.socket.set(.linger, 0)
        holder.socket.close()
        var owner = ReplicaConfiguration()
        owner.viewID = "view-1"
        let replica = try await Self.replica(of: host, owner)
        defer { replica.close() }
        #expect(try await Self.verdict(replica.write("sharedText", to: "mine")).isSuccess)
    }

    @Test("a client that does not read its replies is not read either, and is dropped past its bound")
    func unreadRepliesAreBounded() async throws {
        let folder = Fixtures.temporaryFolder()
        var configuration = HostConfiguration(name: "backlog", controlEndpoint: "ipc://\(folder)/control", persistence: .disabled)
        configuration.maxClientBacklogBytes = 64 << 10
        let host = try await StateHost(objects: [Fixtures.sharedData], configuration: configuration)
        defer { host.stop() }
        let reader = try await Self.replica(of: host)
        defer { reader.close() }

        // A raw client that floods pings and never reads an answer.
        let context = try Context()
        let flooder = try Socket(context: context, type: .dealer)
        try flooder.set(.receiveHighWaterMark, 1)
        // A full socket blocks each send up to 10 ms (back-pressure on the flood), then
        // reports `again`.
        try flooder.set(.sendTimeout, 10)
        try flooder.connect(host.controlEndpoint)
        let ping = try RawClient.request(.ping(Statebus_V1_Ping())).serializedBytes() as [UInt8]
        let deadline = ContinuousClock.now + .seconds(30)
        var sent = 0
        // The loop ends on the host's counter or its deadline.
        while host.statistics.droppedClients == 0, ContinuousClock.now < deadline {
            do throws(ZeroMQError) {
                try flooder.send(ping)
                sent += 1
            } catch {
                guard error.code == EAGAIN else { throw error }
            }
            // Other clients are served all along.
            if sent % 20_000 == 0 { #expect(try await Self.verdict(reader.write("counter", to: .int(Int64(sent)))).isSuccess) }
        }
        flooder.close()
        print(
            "unread replies: \(sent) pings sent unread, droppedClients \(host.statistics.droppedClients), droppedMessages \(host.statistics.droppedMessages)"
        )
        #expect(host.statistics.droppedClients >= 1)
        #expect(try await Self.verdict(reader.write("sharedText", to: "served")).isSuccess)
    }

    @Test("a client that reads its backlog at last gets it at the socket's pace, and its parked writes reach every view")
    func parkedWritesArePublished() async throws {
        let folder = Fixtures.temporaryFolder()
        // Heartbeats, and the watching view's own pings, far apart: nothing but the host's
        // backlog timer runs once the writer reads.
        var configuration = HostConfiguration(name: "parked", controlEndpoint: "ipc://\(folder)/control", persistence: .disabled)
        configuration.heartbeatInterval = .seconds(120)
        configuration.maxClientBacklogBytes = 64 << 20
        let host = try await StateHost(objects: [Fixtures.sharedData], configuration: configuration)
        defer { host.stop() }
        let reader = try await Self.replica(of: host, ReplicaConfiguration(requestTimeout: .seconds(120)))
        defer { reader.close() }
        let joined = reader.statistics

        // A raw client that says hello, then floods pings without reading their answers, so
        // that the host holds its replies and parks its next requests: two writes.
        let context = try Context()
        let writer = RawClient(socket: try Socket(context: context, type: .dealer))
        try writer.socket.set(.receiveHighWaterMark, 1)
        // The host reads (and parks) every request, so a send that cannot go in 10 s is a
        // failure, not a wait.
        try writer.socket.set(.sendTimeout, 10_000)
        try writer.socket.connect(host.controlEndpoint)
        defer { writer.socket.close() }
        try writer.hello()
        let before = host.statistics.requests
        // Far more answers than the host's queue, the socket buffers and the writer's one
        // slot hold (about 12,000 pongs here).
        let pings = 50_000
        let ping = try RawClient.request(.ping(Statebus_V1_Ping())).serializedBytes() as [UInt8]
        for _ in 0..<pings { try writer.socket.send(ping) }
        try writer.send(RawClient.request(id: 8, RawClient.write(object: "SharedData", property: "sharedText", value: "parked-1", writeID: 1)))
        try writer.send(RawClient.request(id: 9, RawClient.write(object: "SharedData", property: "sharedText", value: "parked-2", writeID: 2)))
        // Every request read by the host, and the writes not applied: they are parked.
        let deadline = ContinuousClock.now + .seconds(60)
        // The host signals nothing per request read: its counter is looked at, 2 ms apart.
        while host.statistics.requests < before + pings + 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
        #expect(host.statistics.requests >= before + pings + 2, "the host read \(host.statistics.requests - before) of \(pings + 2) requests")
        #expect(host.value(of: "sharedText", in: "SharedData") == "", "the writes were not parked behind the unread replies")

        // The writer reads every answer now; the host's backlog timer sends the rest as fast
        // as the socket takes them (it sent one per 10 ms tick when the replies were equal,
        // as pongs are: 271 s for 30,000), then handles the parked writes.
        var answered = 0
        var pongs = 0
        let reading = ContinuousClock.now
        while answered < 2, ContinuousClock.now - reading < .seconds(60), let reply = try writer.reply() {
            if case .pong = reply.body { pongs += 1 }
            if case .writeReply(let answer) = reply.body {
                #expect(answer.accepted, "\(answer)")
                answered += 1
            }
        }
        #expect(answered == 2, "the writer got \(answered) of 2 write answers (and \(pongs) of \(pings) pongs) in 60 s")
        print("parked writes: \(pongs) pongs read before the write answers, in \(ContinuousClock.now - reading)")
        try await reader.waitFor(timeout: .seconds(20), "the last parked write") { $0["sharedText"] == "parked-2" }
        #expect(reader.statistics.appliedSnapshots == joined.appliedSnapshots, "the view took a snapshot instead of the publication")
    }
}

extension Result {
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
