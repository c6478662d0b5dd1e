import StateBusEtcd
import Testing

/// Every key-value request shape against a real etcd: a misspelt field is silently ignored by
/// the gateway, so only a real answer proves a shape right.
@Suite("EtcdClient key-value requests", .timeLimit(.minutes(2)))
struct EtcdClientKVTests {
    @Test("put then get returns the value and its revisions; a missing key is nil")
    func putAndGet() async throws {
        try await withEtcdClient { _, client in
            let first = try await client.put(key: "/k/a", value: "one")
            let (keyValue, revision) = try await client.get(key: "/k/a")
            #expect(keyValue?.valueString == "one")
            #expect(keyValue?.keyString == "/k/a")
            #expect(keyValue?.createRevision == first)
            #expect(keyValue?.modRevision == first)
            #expect(keyValue?.version == 1)
            #expect(keyValue?.lease == 0)
            #expect(revision == first)

            let second = try await client.put(key: bytes("/k/a"), value: [0, 255, 10])
            let updated = try await client.get(key: "/k/a").keyValue
            #expect(updated?.value == [0, 255, 10])
            #expect(updated?.version == 2)
            #expect(updated?.createRevision == first)
            #expect(updated?.modRevision == second)

            let missing = try await client.get(key: "/k/none")
            #expect(missing.keyValue == nil)
            #expect(missing.revision == second)
        }
    }

    @Test("range over a prefix returns exactly the keys under it, in order")
    func rangePrefix() async throws {
        try await withEtcdClient { _, client in
            var last: Int64 = 0
            for key in ["/p/b", "/p/a", "/p0", "/q", "/p"] {
                last = try await client.put(key: key, value: "v\(key)")
            }
            let (keyValues, revision) = try await client.range(prefix: "/p/")
            #expect(keyValues.map(\.keyString) == ["/p/a", "/p/b"])
            #expect(keyValues.map(\.valueString) == ["v/p/a", "v/p/b"])
            #expect(revision == last)
            #expect(try await client.range(prefix: "/none/").keyValues.isEmpty)
            #expect(try await client.range(prefix: []).keyValues.count == 5)
        }
    }

    @Test("the end of a prefix range raises the last byte below 0xFF")
    func prefixRangeEnd() {
        #expect(EtcdClient.rangeEnd(ofPrefix: bytes("/p/")) == bytes("/p0"))
        #expect(EtcdClient.rangeEnd(ofPrefix: [0x61, 0xFF]) == [0x62])
        #expect(EtcdClient.rangeEnd(ofPrefix: [0xFF, 0xFF]) == [0])
        #expect(EtcdClient.rangeEnd(ofPrefix: []) == [0])
    }

    @Test("delete removes a key and counts it")
    func delete() async throws {
        try await withEtcdClient { _, client in
            try await client.put(key: "/d", value: "x")
            #expect(try await client.delete(key: "/d") == 1)
            #expect(try await client.delete(key: "/d") == 0)
            #expect(try await client.get(key: "/d").keyValue == nil)
        }
    }

    @Test("a transaction runs its success branch when the compares hold, its failure branch otherwise")
    func transactionBranches() async throws {
        try await withEtcdClient { _, client in
            let key = bytes("/t/key")
            let campaign = EtcdTransaction(
                compares: [.missing(key)], success: [.put(key: key, value: bytes("first"))], failure: [.range(key: key)])
            let won = try await client.txn(campaign)
            #expect(won.succeeded)
            #expect(won.responses == [.put(revision: won.revision)])
            #expect(try await client.get(key: key).keyValue?.createRevision == won.revision)

            let lost = try await client.txn(campaign)
            #expect(!lost.succeeded)
            #expect(lost.revision == won.revision)
            guard case .range(let found)? = lost.responses.first else {
                Issue.record("expected the failure branch's range, got \(lost.responses)")
                return
            }
            #expect(found.map(\.valueString) == ["first"])
            #expect(found.first?.createRevision == won.revision)
        }
    }

    @Test("each compare target and result is understood by etcd")
    func compareTargets() async throws {
        try await withEtcdClient { _, client in
            let key = bytes("/c/key")
            let revision = try await client.put(key: key, value: bytes("v1"))
            func holds(_ compare: EtcdCompare) async throws -> Bool {
                try await client.txn(EtcdTransaction(compares: [compare], success: [], failure: [])).succeeded
            }
            #expect(try await holds(EtcdCompare(key: key, .createRevision(revision), .equal)))
            #expect(try await !holds(EtcdCompare(key: key, .createRevision(revision + 1), .equal)))
            #expect(try await holds(EtcdCompare(key: key, .modRevision(revision), .equal)))
            #expect(try await holds(EtcdCompare(key: key, .modRevision(revision + 1), .less)))
            #expect(try await holds(EtcdCompare(key: key, .version(0), .greater)))
            #expect(try await holds(EtcdCompare(key: key, .version(1), .equal)))
            #expect(try await holds(EtcdCompare(key: key, .value(bytes("v1")), .equal)))
            #expect(try await holds(EtcdCompare(key: key, .value(bytes("v2")), .notEqual)))
            #expect(try await holds(EtcdCompare(key: key, .lease(0), .equal)))
            #expect(try await !holds(EtcdCompare(key: key, .value(bytes("v2")), .equal)))
        }
    }

    @Test("compares on a missing key: create revision and lease are 0, and no value equals \"\"")
    func compareMissingKey() async throws {
        try await withEtcdClient { _, client async throws in
            let key = bytes("/c/missing")
            func holds(_ compare: EtcdCompare) async throws -> Bool {
                try await client.txn(EtcdTransaction(compares: [compare], success: [], failure: [])).succeeded
            }
            #expect(try await holds(.missing(key)))
            #expect(try await holds(EtcdCompare(key: key, .lease(0))))
            #expect(try await holds(EtcdCompare(key: key, .version(0))))
            #expect(try await !holds(EtcdCompare(key: key, .value([]))))
        }
    }

    @Test("a transaction can delete, and reports how many keys went")
    func transactionDelete() async throws {
        try await withEtcdClient { _, client in
            try await client.put(key: "/x/1", value: "a")
            try await client.put(key: "/x/2", value: "b")
            let result = try await client.txn(
                EtcdTransaction(
                    compares: [EtcdCompare(key: "/x/1", .version(1))],
                    success: [.deleteRange(key: bytes("/x/"), rangeEnd: EtcdClient.rangeEnd(ofPrefix: bytes("/x/")))]))
            #expect(result.succeeded)
            #expect(result.responses == [.deleteRange(deleted: 2)])
        }
    }

    @Test("a fenced write fails once the leader key was re-created, even with the same value")
    func fencedTransaction() async throws {
        try await withEtcdClient { _, client in
            let leaderKey = bytes("/statebus/g/leader")
            let lease = try await client.grantLease(ttlSeconds: 10)
            let campaign = try await client.txn(
                EtcdTransaction(compares: [.missing(leaderKey)], success: [.put(key: leaderKey, value: bytes("A"), lease: lease.id)]))
            #expect(campaign.succeeded)
            let fence = EtcdCompare(key: leaderKey, .createRevision(campaign.revision))
            let write = EtcdTransaction(
                compares: [fence], success: [.put(key: bytes("/data/x"), value: bytes("1"))], failure: [.range(key: leaderKey)])
            #expect(try await client.txn(write).succeeded)

            // The same host wins a later term: same value, new create revision.
            try await client.revoke(lease: lease.id)
            let next = try await client.grantLease(ttlSeconds: 10)
            let again = try await client.txn(
                EtcdTransaction(compares: [.missing(leaderKey)], success: [.put(key: leaderKey, value: bytes("A"), lease: next.id)]))
            #expect(again.succeeded)
            let stale = try await client.txn(write)
            #expect(!stale.succeeded)
            guard case .range(let current)? = stale.responses.first else {
                Issue.record("expected the failure branch's range, got \(stale.responses)")
                return
            }
            #expect(current.first?.createRevision == again.revision)
            #expect(current.first?.lease == next.id)
            #expect(try await client.get(key: "/data/x").keyValue?.modRevision == campaign.revision + 1)
        }
    }

    @Test("etcd's refusals arrive as rejected errors with the gRPC code")
    func rejectedTransaction() async throws {
        try await withEtcdClient { server, client in
            let key = bytes("/dup")
            do {
                _ = try await client.txn(
                    EtcdTransaction(compares: [], success: [.put(key: key, value: [1]), .put(key: key, value: [2])]))
                Issue.record("a key twice in one branch was accepted")
            } catch let error as EtcdError {
                guard case .rejected(let code, let message) = error.kind else {
                    Issue.record("expected rejected, got \(error)")
                    return
                }
                #expect(code == 3)
                #expect(message.contains("duplicate key"))
                #expect(error.endpoints == [server.endpoint])
            }
        }
    }
}
