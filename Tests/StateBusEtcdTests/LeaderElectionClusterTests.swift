import StateBusEtcd
import Testing

/// A 3-member etcd cluster losing a member, for the client and for the election. Part of the
/// serialized ``LeaderElectionTests`` suite, so that its three etcd processes do not run
/// beside the timing tests.
extension LeaderElectionTests {
    @Test("a client with every member's endpoint keeps working when etcd's raft leader dies")
    func clusterClientFailover() async throws {
        try await EtcdTestCluster.withCluster(logger: testLogger) { cluster in
            let client = try EtcdClient(endpoints: cluster.endpoints, requestTimeout: .seconds(1), logger: testLogger)
            do {
                try await client.put(key: "/c/k", value: "before")
                let raftLeader = try await raftLeaderIndex(of: cluster)
                let killed = ContinuousClock.now
                await cluster.members[raftLeader].kill()
                // Writes wait until the surviving members have elected a new raft leader.
                try await waitUntil("a write through the surviving members", timeout: .seconds(10)) {
                    (try? await client.put(key: "/c/k", value: "after")) != nil
                }
                print("measured: first write \(ContinuousClock.now - killed) after etcd's raft leader (member \(raftLeader)) was killed")
                #expect(try await client.get(key: "/c/k").keyValue?.valueString == "after")
                #expect(try await client.health())
            } catch {
                await client.shutdown()
                throw error
            }
            await client.shutdown()
        }
    }

    @Test("an election on a 3-member cluster has one leader again after etcd's raft leader dies")
    func clusterElection() async throws {
        try await EtcdTestCluster.withCluster(logger: testLogger) { cluster in
            var candidates: [Candidate] = []
            func cleanUp() async {
                for candidate in candidates {
                    await candidate.election.resign()
                    candidate.recorder.stop()
                    await candidate.client.shutdown()
                }
            }
            do {
                for name in ["A", "B"] {
                    let client = try EtcdClient(endpoints: cluster.endpoints, requestTimeout: .seconds(1), logger: testLogger)
                    let election = try LeaderElection(client: client, group: "g1", candidate: bytes(name), logger: testLogger)
                    candidates.append(Candidate(name: name, client: client, election: election, recorder: EventRecorder(election, name: name)))
                }
                for candidate in candidates { candidate.election.start() }
                let (leader, _) = try await settled(candidates)
                let term = try #require(leader.election.currentLeadership)
                let raftLeader = try await raftLeaderIndex(of: cluster)
                let killed = ContinuousClock.now
                await cluster.members[raftLeader].kill()
                // Let the surviving members elect a new raft leader before judging.
                try await waitUntil("a write through the surviving members", timeout: .seconds(10)) {
                    (try? await candidates[0].client.put(key: "/c/probe", value: "x")) != nil
                }
                let (after, _) = try await settled(candidates)
                let kept = after.name == leader.name && after.election.currentLeadership == term
                print("measured: one leader \(ContinuousClock.now - killed) after etcd's raft leader was killed; the same term: \(kept)")
                // Whoever leads holds the leader key in etcd, as the surviving members see it.
                let stored = try await after.client.get(key: after.election.leaderKey).keyValue
                #expect(stored?.value == after.record)
                #expect(stored?.createRevision == after.election.currentLeadership?.createRevision)
                await cleanUp()
            } catch {
                await cleanUp()
                throw error
            }
        }
    }
}
