import StateBusEtcd
import Testing

/// Leader election against a real etcd. Serialized: the timings asserted here are about the
/// election, and parallel etcd processes on a busy machine would only blur them.
@Suite("LeaderElection", .serialized, .timeLimit(.minutes(2)))
struct LeaderElectionTests {
    /// A candidate under test: the election, its own client, and its recorded events.
    struct Candidate {
        let name: String
        let client: EtcdClient
        let election: LeaderElection
        let recorder: EventRecorder
        var record: [UInt8] { election.candidate }
    }

    /// Runs `body` with candidates that have started campaigning, on a fresh etcd; resigns them
    /// and shuts their clients down afterwards, also on failure.
    func withCandidates(
        _ names: [String], group: String = "g1", leaseTTL: Duration = .seconds(2),
        _ body: (EtcdTestServer, [Candidate]) async throws -> Void
    ) async throws {
        try await EtcdTestServer.withEtcd(logger: testLogger) { server in
            var candidates: [Candidate] = []
            func cleanUp() async {
                for candidate in candidates {
                    await candidate.election.resign()
                    candidate.recorder.stop()
                    await candidate.client.shutdown()
                }
            }
            do {
                for name in names {
                    let client = try EtcdClient(endpoints: [server.endpoint], requestTimeout: .seconds(1), logger: testLogger)
                    let election = try LeaderElection(
                        client: client, group: group, candidate: bytes("{\"name\":\"\(name)\"}"), leaseTTL: leaseTTL, logger: testLogger)
                    candidates.append(Candidate(name: name, client: client, election: election, recorder: EventRecorder(election, name: name)))
                }
                for candidate in candidates { candidate.election.start() }
                try await body(server, candidates)
                await cleanUp()
            } catch {
                await cleanUp()
                throw error
            }
        }
    }

    /// Waits until one candidate leads and every other follows it, and returns the leader first.
    func settled(_ candidates: [Candidate], after counts: [Int]? = nil) async throws -> (leader: Candidate, followers: [Candidate]) {
        var leader: Candidate?
        try await waitUntil("one leader among \(candidates.map(\.name))") {
            let leading = candidates.filter { $0.election.isLeader() }
            guard leading.count == 1, let only = leading.first else { return false }
            leader = only
            return candidates.allSatisfy { candidate in
                candidate.name == only.name
                    || candidate.recorder.events.last
                        == .following(leader: only.record, revision: only.election.currentLeadership?.createRevision ?? -1)
            }
        }
        let found = try #require(leader)
        return (found, candidates.filter { $0.name != found.name })
    }

    @Test("a group name outside [A-Za-z0-9._-] or a TTL of zero is refused", arguments: ["", "a/b", "a b", "ä"])
    func badGroupName(_ group: String) async throws {
        let client = try EtcdClient(endpoints: ["http://127.0.0.1:2379"], logger: testLogger)
        #expect(throws: EtcdError.self) { try LeaderElection(client: client, group: group, candidate: [], logger: testLogger) }
        #expect(throws: EtcdError.self) { try LeaderElection(client: client, group: "ok", candidate: [], leaseTTL: .zero, logger: testLogger) }
        let valid = try LeaderElection(client: client, group: "Orders_1.eu-west", candidate: [], leaseTTL: .milliseconds(1500), logger: testLogger)
        #expect(valid.leaderKey == bytes("/statebus/Orders_1.eu-west/leader"))
        #expect(valid.leaseTTLSeconds == 2)
        #expect(valid.safetyMargin == .milliseconds(200))
        await client.shutdown()
    }

    @Test("of two candidates exactly one leads, and the other follows it with its record")
    func twoCandidates() async throws {
        try await withCandidates(["A", "B"]) { _, candidates in
            let (leader, followers) = try await settled(candidates)
            let follower = try #require(followers.first)
            let leadership = try #require(leader.election.currentLeadership)
            #expect(leader.recorder.events.filter(\.isLeading) == [.leading(leadership)])
            #expect(!follower.recorder.events.contains { $0.isLeading })
            #expect(!follower.election.isLeader())
            #expect(follower.election.currentLeadership == nil)
            let stored = try await leader.client.get(key: leader.election.leaderKey).keyValue
            #expect(stored?.value == leader.record)
            #expect(stored?.createRevision == leadership.createRevision)
            #expect(stored?.lease == leadership.leaseID)

            // A late subscriber hears the current role first.
            let late = EventRecorder(follower.election, name: "late")
            try await late.waitFor("the current role") { $0 == .following(leader: leader.record, revision: leadership.createRevision) }
            late.stop()
        }
    }

    @Test("when the leader resigns, the other candidate leads within two TTLs")
    func resignFailover() async throws {
        try await withCandidates(["A", "B"]) { _, candidates in
            let (leader, followers) = try await settled(candidates)
            let follower = try #require(followers.first)
            let before = follower.recorder.count
            let resigned = ContinuousClock.now
            await leader.election.resign()
            #expect(!leader.election.isLeader())
            try await leader.recorder.waitFor("its own stepping down") { $0 == .steppedDown(reason: "resigned") }
            try await follower.recorder.waitFor("leading", after: before, timeout: .seconds(4), \.isLeading)
            let took = try #require(follower.recorder.firstTime(after: before, where: \.isLeading)) - resigned
            print("measured: failover after resign took \(took)")
            #expect(took < .seconds(4))
            #expect(follower.election.isLeader())
        }
    }

    @Test("a leader whose etcd is paused steps down no later than its lease could end")
    func pausedEtcd() async throws {
        try await withCandidates(["A"]) { server, candidates in
            let leader = try #require(candidates.first)
            try await leader.recorder.waitFor("leading", \.isLeading)
            let before = leader.recorder.count
            let paused = ContinuousClock.now
            server.pause()
            // The last renewal was sent before the pause, so etcd may end the lease at
            // pause + TTL at the earliest; the leader must know it by then from its clock alone.
            #expect(!leader.election.isLeader(at: paused + .seconds(2)))
            try await leader.recorder.waitFor("stepping down", after: before, timeout: .seconds(5), \.isSteppedDown)
            let steppedDown = try #require(leader.recorder.firstTime(after: before, where: \.isSteppedDown))
            print("measured: stepped down \(steppedDown - paused) after etcd was paused (lease TTL 2 s)")
            // The event may come late on a starved machine; the clock check above is the bound.
            #expect(steppedDown - paused < .seconds(30))
            #expect(!leader.election.isLeader())
            let reason = leader.recorder.events[before].stepDownReason ?? ""
            #expect(reason.contains("could not be renewed"))

            server.resume()
            let resumed = ContinuousClock.now
            try await leader.recorder.waitFor("leading again", after: before, \.isLeading)
            print("measured: leading again \(ContinuousClock.now - resumed) after etcd resumed")
        }
    }

    @Test("a leader whose lease is revoked from outside steps down, and the other leads")
    func revokedFromOutside() async throws {
        try await withCandidates(["A", "B"]) { _, candidates in
            let (leader, followers) = try await settled(candidates)
            let follower = try #require(followers.first)
            let leadership = try #require(leader.election.currentLeadership)
            let before = (leader.recorder.count, follower.recorder.count)
            let revoked = ContinuousClock.now
            try await follower.client.revoke(lease: leadership.leaseID)
            try await leader.recorder.waitFor("stepping down", after: before.0, timeout: .seconds(4), \.isSteppedDown)
            print("measured: stepped down \(ContinuousClock.now - revoked) after its lease was revoked")
            // Its revoked term is over; it may already lead a new one, having campaigned again.
            #expect(leader.election.currentLeadership != leadership)
            let (next, _) = try await settled(candidates)
            #expect(next.election.currentLeadership != leadership)
            #expect(try #require(next.election.currentLeadership).createRevision > leadership.createRevision)
        }
    }

    @Test("a leader whose key is deleted from outside steps down")
    func keyDeletedFromOutside() async throws {
        try await withCandidates(["A"]) { _, candidates in
            let leader = try #require(candidates.first)
            try await leader.recorder.waitFor("leading", \.isLeading)
            let leadership = try #require(leader.election.currentLeadership)
            let before = leader.recorder.count
            try await leader.client.delete(key: leader.election.leaderKey)
            let event = try await leader.recorder.waitFor("stepping down", after: before, timeout: .seconds(4), \.isSteppedDown)
            #expect(event == .steppedDown(reason: "the leader key was deleted or taken over"))
            try await leader.recorder.waitFor("leading a new term", after: before) { $0.isLeading && $0 != .leading(leadership) }
        }
    }

    @Test("a crashed leader's key expires with its lease, and the follower takes over")
    func crashedLeader() async throws {
        try await EtcdTestServer.withEtcd(logger: testLogger) { server in
            let client = try EtcdClient(endpoints: [server.endpoint], logger: testLogger)
            let key = bytes("/statebus/g1/leader")
            // A leader that won a term and then died: its lease is never renewed.
            let granted = ContinuousClock.now
            let lease = try await client.grantLease(ttlSeconds: 2)
            let won = try await client.txn(
                EtcdTransaction(compares: [.missing(key)], success: [.put(key: key, value: bytes("dead"), lease: lease.id)]))
            #expect(won.succeeded)

            let election = try LeaderElection(client: client, group: "g1", candidate: bytes("B"), logger: testLogger)
            let recorder = EventRecorder(election, name: "B")
            election.start()
            do {
                try await recorder.waitFor("following the dead leader") { $0 == .following(leader: bytes("dead"), revision: won.revision) }
                try await recorder.waitFor("leading", timeout: .seconds(6), \.isLeading)
                let took = try #require(recorder.firstTime(where: \.isLeading)) - granted
                print("measured: took over \(took) after the crashed leader's last renewal (lease TTL 2 s)")
                #expect(took >= .seconds(2))
                #expect(took < .seconds(4))
            } catch {
                await election.resign()
                await client.shutdown()
                throw error
            }
            await election.resign()
            recorder.stop()
            await client.shutdown()
        }
    }

    @Test("the fencing compare admits the current leader's writes and refuses a deposed one's")
    func fencing() async throws {
        try await withCandidates(["A", "B"]) { _, candidates in
            let (leader, followers) = try await settled(candidates)
            let follower = try #require(followers.first)
            let oldTerm = try #require(leader.election.currentLeadership)
            func write(_ fence: EtcdCompare) async throws -> Bool {
                try await follower.client.txn(
                    EtcdTransaction(compares: [fence], success: [.put(key: bytes("/data/x"), value: bytes("v"))])
                ).succeeded
            }
            #expect(try await write(leader.election.fencingCompare(for: oldTerm)))
            await leader.election.resign()
            try await waitUntil("B leading") { follower.election.isLeader() }
            let newTerm = try #require(follower.election.currentLeadership)
            #expect(try await !write(leader.election.fencingCompare(for: oldTerm)))
            #expect(try await write(follower.election.fencingCompare(for: newTerm)))
        }
    }
}
