// Requests and answers of /v3/lease/grant, /v3/lease/keepalive and /v3/lease/revoke.
// The proto's field names are upper case here (`ID`, `TTL`); the gateway silently ignores a
// misspelt one (`ttl`), so these keys must stay exactly as they are.

/// `etcdserverpb.LeaseGrantRequest`.
struct WireLeaseGrantRequest: Encodable, Sendable {
    var ttl: WireInt64

    enum CodingKeys: String, CodingKey {
        case ttl = "TTL"
    }
}

/// `etcdserverpb.LeaseGrantResponse`.
struct WireLeaseGrantResponse: Decodable, Sendable {
    var header: WireHeader?
    var id: WireInt64?
    var ttl: WireInt64?
    var error: String?

    enum CodingKeys: String, CodingKey {
        case header
        case id = "ID"
        case ttl = "TTL"
        case error
    }
}

/// `etcdserverpb.LeaseKeepAliveRequest` and `etcdserverpb.LeaseRevokeRequest`.
struct WireLeaseIDRequest: Encodable, Sendable {
    var id: WireInt64

    enum CodingKeys: String, CodingKey {
        case id = "ID"
    }
}

/// `etcdserverpb.LeaseKeepAliveResponse`: `TTL` is the granted TTL, absent (0) when the
/// lease no longer exists.
struct WireLeaseKeepAliveResponse: Decodable, Sendable {
    var header: WireHeader?
    var id: WireInt64?
    var ttl: WireInt64?

    enum CodingKeys: String, CodingKey {
        case header
        case id = "ID"
        case ttl = "TTL"
    }
}

/// `etcdserverpb.LeaseRevokeResponse`.
struct WireLeaseRevokeResponse: Decodable, Sendable {
    var header: WireHeader?

    enum CodingKeys: String, CodingKey {
        case header
    }
}
