import StateBusEtcd
import Testing

@Suite("EtcdClient lease requests", .timeLimit(.minutes(2)))
struct EtcdClientLeaseTests {
    @Test("grant returns an ID and the TTL; keepalive returns the granted TTL, then 0 once revoked")
    func grantKeepAliveRevoke() async throws {
        try await withEtcdClient { _, client in
            let lease = try await client.grantLease(ttlSeconds: 5)
            #expect(lease.id != 0)
            #expect(lease.ttlSeconds == 5)
            #expect(try await client.keepAlive(lease: lease.id) == 5)
            let revoked = try await client.revoke(lease: lease.id)
            #expect(revoked > 0)
            #expect(try await client.keepAlive(lease: lease.id) == 0)
            await #expect(throws: EtcdError.self) { try await client.revoke(lease: lease.id) }
            do {
                try await client.revoke(lease: lease.id)
            } catch let error as EtcdError {
                #expect(error.kind == .leaseNotFound)
            }
        }
    }

    @Test("etcd raises a TTL below its minimum")
    func minimumTTL() async throws {
        try await withEtcdClient { _, client in
            let lease = try await client.grantLease(ttlSeconds: 0)
            #expect(lease.ttlSeconds >= 1)
        }
    }

    @Test("a key put with a lease goes when the lease is revoked; a put with a dead lease fails")
    func keysFollowTheirLease() async throws {
        try await withEtcdClient { _, client in
            let lease = try await client.grantLease(ttlSeconds: 30)
            try await client.put(key: "/l/k", value: "v", lease: lease.id)
            #expect(try await client.get(key: "/l/k").keyValue?.lease == lease.id)
            try await client.revoke(lease: lease.id)
            #expect(try await client.get(key: "/l/k").keyValue == nil)
            do {
                try await client.put(key: "/l/k", value: "v", lease: lease.id)
                Issue.record("a put with a revoked lease was accepted")
            } catch let error as EtcdError {
                #expect(error.kind == .leaseNotFound)
            }
        }
    }

    @Test("a TTL past etcd's maximum is rejected with code 11")
    func tooLargeTTL() async throws {
        try await withEtcdClient { _, client in
            do {
                _ = try await client.grantLease(ttlSeconds: 9_000_000_001)
                Issue.record("a too large TTL was granted")
            } catch let error as EtcdError {
                guard case .rejected(let code, _) = error.kind else {
                    Issue.record("expected rejected, got \(error)")
                    return
                }
                #expect(code == 11)
            }
        }
    }
}
