// Requests and answers of /v3/kv/range, /v3/kv/put, /v3/kv/deleterange and /v3/kv/txn.

/// `etcdserverpb.RangeRequest`.
struct WireRangeRequest: Encodable, Sendable {
    var key: WireBytes
    var rangeEnd: WireBytes?

    enum CodingKeys: String, CodingKey {
        case key
        case rangeEnd = "range_end"
    }
}

/// `etcdserverpb.RangeResponse`.
struct WireRangeResponse: Decodable, Sendable {
    var header: WireHeader?
    var kvs: [WireKeyValue]?
    var count: WireInt64?

    enum CodingKeys: String, CodingKey {
        case header, kvs, count
    }
}

/// `etcdserverpb.PutRequest`.
struct WirePutRequest: Encodable, Sendable {
    var key: WireBytes
    var value: WireBytes
    var lease: WireInt64?

    enum CodingKeys: String, CodingKey {
        case key, value, lease
    }
}

/// `etcdserverpb.PutResponse`.
struct WirePutResponse: Decodable, Sendable {
    var header: WireHeader?

    enum CodingKeys: String, CodingKey {
        case header
    }
}

/// `etcdserverpb.DeleteRangeRequest`.
struct WireDeleteRangeRequest: Encodable, Sendable {
    var key: WireBytes
    var rangeEnd: WireBytes?

    enum CodingKeys: String, CodingKey {
        case key
        case rangeEnd = "range_end"
    }
}

/// `etcdserverpb.DeleteRangeResponse`.
struct WireDeleteRangeResponse: Decodable, Sendable {
    var header: WireHeader?
    var deleted: WireInt64?

    enum CodingKeys: String, CodingKey {
        case header, deleted
    }
}

/// `etcdserverpb.Compare`. The compared value goes in the field named after the target; etcd
/// reads a missing one as zero, but the client always writes it.
struct WireCompare: Encodable, Sendable {
    var key: WireBytes
    var target: String
    var result: String
    var createRevision: WireInt64?
    var modRevision: WireInt64?
    var version: WireInt64?
    var value: WireBytes?
    var lease: WireInt64?

    enum CodingKeys: String, CodingKey {
        case key, target, result
        case createRevision = "create_revision"
        case modRevision = "mod_revision"
        case version, value, lease
    }

    init(_ compare: EtcdCompare) {
        key = WireBytes(compare.key)
        result = compare.result.rawValue
        switch compare.target {
        case .createRevision(let revision):
            target = "CREATE"
            createRevision = WireInt64(revision)
        case .modRevision(let revision):
            target = "MOD"
            modRevision = WireInt64(revision)
        case .version(let number):
            target = "VERSION"
            version = WireInt64(number)
        case .value(let bytes):
            target = "VALUE"
            value = WireBytes(bytes)
        case .lease(let id):
            target = "LEASE"
            lease = WireInt64(id)
        }
    }
}

/// `etcdserverpb.RequestOp`: exactly one field is set.
struct WireRequestOp: Encodable, Sendable {
    var requestRange: WireRangeRequest?
    var requestPut: WirePutRequest?
    var requestDeleteRange: WireDeleteRangeRequest?

    enum CodingKeys: String, CodingKey {
        case requestRange = "request_range"
        case requestPut = "request_put"
        case requestDeleteRange = "request_delete_range"
    }

    init(_ operation: EtcdOperation) {
        switch operation {
        case .put(let key, let value, let lease):
            requestPut = WirePutRequest(key: WireBytes(key), value: WireBytes(value), lease: lease.map(WireInt64.init))
        case .range(let key, let rangeEnd):
            requestRange = WireRangeRequest(key: WireBytes(key), rangeEnd: rangeEnd.map(WireBytes.init))
        case .deleteRange(let key, let rangeEnd):
            requestDeleteRange = WireDeleteRangeRequest(key: WireBytes(key), rangeEnd: rangeEnd.map(WireBytes.init))
        }
    }
}

/// `etcdserverpb.ResponseOp`: exactly one field is set.
struct WireResponseOp: Decodable, Sendable {
    var responseRange: WireRangeResponse?
    var responsePut: WirePutResponse?
    var responseDeleteRange: WireDeleteRangeResponse?

    enum CodingKeys: String, CodingKey {
        case responseRange = "response_range"
        case responsePut = "response_put"
        case responseDeleteRange = "response_delete_range"
    }

    /// The domain answer, or nil when none of the three fields is there.
    var domain: EtcdOperationResult? {
        if let put = responsePut { return .put(revision: put.header?.revision.orZero ?? 0) }
        if let range = responseRange { return .range(keyValues: (range.kvs ?? []).map(\.domain)) }
        if let delete = responseDeleteRange { return .deleteRange(deleted: delete.deleted.orZero) }
        return nil
    }
}

/// `etcdserverpb.TxnRequest`.
struct WireTxnRequest: Encodable, Sendable {
    var compare: [WireCompare]
    var success: [WireRequestOp]
    var failure: [WireRequestOp]

    enum CodingKeys: String, CodingKey {
        case compare, success, failure
    }

    init(_ transaction: EtcdTransaction) {
        compare = transaction.compares.map(WireCompare.init)
        success = transaction.success.map(WireRequestOp.init)
        failure = transaction.failure.map(WireRequestOp.init)
    }
}

/// `etcdserverpb.TxnResponse`.
struct WireTxnResponse: Decodable, Sendable {
    var header: WireHeader?
    var succeeded: Bool?
    var responses: [WireResponseOp]?

    enum CodingKeys: String, CodingKey {
        case header, succeeded, responses
    }
}
