// Leases: grant, renew once, revoke.

extension EtcdClient {
    /// Grants a lease.
    /// - Parameter ttlSeconds: the time to live asked for; etcd raises it to its minimum
    ///   (1 s or more) and caps it at 9,000,000,000 s.
    /// - Returns: the lease, with the TTL etcd granted.
    /// - Throws: ``EtcdError``; `rejected` with gRPC code 11 for a TTL that is too large.
    public func grantLease(ttlSeconds: Int64) async throws(EtcdError) -> EtcdLease {
        let response: WireLeaseGrantResponse = try await post("/v3/lease/grant", WireLeaseGrantRequest(ttl: WireInt64(ttlSeconds)))
        if let error = response.error, !error.isEmpty {
            throw EtcdError(.rejected(grpcCode: 2, message: error), endpoints: endpoints, message: "etcd refused the lease grant: \(error)")
        }
        guard let id = response.id?.value, id != 0 else {
            throw EtcdError(.badResponse, endpoints: endpoints, message: "etcd granted a lease without an ID")
        }
        return EtcdLease(id: id, ttlSeconds: response.ttl.orZero)
    }

    /// Renews a lease once, to its full granted TTL.
    ///
    /// The renewal counts from some instant after the request was sent, so a holder that
    /// must not outlive its lease should reckon its validity from the time taken *before*
    /// calling this: sent + returned TTL.
    /// - Parameter lease: the lease's ID.
    /// - Returns: the lease's granted TTL in seconds (not the time left), or 0 when the lease
    ///   no longer exists (expired or revoked): etcd answers that without an error.
    /// - Throws: ``EtcdError`` when no endpoint answered.
    public func keepAlive(lease: Int64) async throws(EtcdError) -> Int64 {
        let response: WireLeaseKeepAliveResponse = try await post(
            "/v3/lease/keepalive", WireLeaseIDRequest(id: WireInt64(lease)), framing: .streamLine)
        return response.ttl.orZero
    }

    /// Revokes a lease: the keys attached to it are deleted at once.
    /// - Parameter lease: the lease's ID.
    /// - Returns: the store's revision after the revoke.
    /// - Throws: ``EtcdError``; `leaseNotFound` when the lease is already gone.
    @discardableResult
    public func revoke(lease: Int64) async throws(EtcdError) -> Int64 {
        let response: WireLeaseRevokeResponse = try await post("/v3/lease/revoke", WireLeaseIDRequest(id: WireInt64(lease)))
        return response.header?.revision.orZero ?? 0
    }
}
