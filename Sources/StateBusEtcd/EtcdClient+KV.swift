// Keys and values: get, range over a prefix, put, delete, transactions.

extension EtcdClient {
    /// Reads one key (a linearizable read).
    /// - Parameter key: the key.
    /// - Returns: the key-value, or nil when the key does not exist, and the store's revision
    ///   at the read (watch from `revision + 1` to see what comes after it).
    /// - Throws: ``EtcdError``.
    public func get(key: [UInt8]) async throws(EtcdError) -> (keyValue: EtcdKeyValue?, revision: Int64) {
        let response: WireRangeResponse = try await post("/v3/kv/range", WireRangeRequest(key: WireBytes(key)))
        return (response.kvs?.first?.domain, response.header?.revision.orZero ?? 0)
    }

    /// Reads one key given as a UTF-8 string.
    public func get(key: String) async throws(EtcdError) -> (keyValue: EtcdKeyValue?, revision: Int64) {
        try await get(key: Array(key.utf8))
    }

    /// Reads every key that starts with `prefix`, in key order.
    /// - Parameter prefix: the prefix; an empty one reads every key.
    /// - Returns: the key-values and the store's revision at the read.
    /// - Throws: ``EtcdError``.
    public func range(prefix: [UInt8]) async throws(EtcdError) -> (keyValues: [EtcdKeyValue], revision: Int64) {
        let request = WireRangeRequest(key: WireBytes(prefix.isEmpty ? [0] : prefix), rangeEnd: WireBytes(Self.rangeEnd(ofPrefix: prefix)))
        let response: WireRangeResponse = try await post("/v3/kv/range", request)
        return ((response.kvs ?? []).map(\.domain), response.header?.revision.orZero ?? 0)
    }

    /// Reads every key that starts with `prefix`, given as a UTF-8 string.
    public func range(prefix: String) async throws(EtcdError) -> (keyValues: [EtcdKeyValue], revision: Int64) {
        try await range(prefix: Array(prefix.utf8))
    }

    /// Puts a value.
    /// - Parameters:
    ///   - key: the key.
    ///   - value: the value.
    ///   - lease: the lease to attach the key to; without one, the key loses any lease it had.
    /// - Returns: the revision of the put.
    /// - Throws: ``EtcdError``; `leaseNotFound` for a lease that is gone.
    @discardableResult
    public func put(key: [UInt8], value: [UInt8], lease: Int64? = nil) async throws(EtcdError) -> Int64 {
        let request = WirePutRequest(key: WireBytes(key), value: WireBytes(value), lease: lease.map(WireInt64.init))
        let response: WirePutResponse = try await post("/v3/kv/put", request)
        return response.header?.revision.orZero ?? 0
    }

    /// Puts a value, with key and value given as UTF-8 strings.
    @discardableResult
    public func put(key: String, value: String, lease: Int64? = nil) async throws(EtcdError) -> Int64 {
        try await put(key: Array(key.utf8), value: Array(value.utf8), lease: lease)
    }

    /// Deletes one key.
    /// - Returns: how many keys were deleted (0 or 1).
    /// - Throws: ``EtcdError``.
    @discardableResult
    public func delete(key: [UInt8]) async throws(EtcdError) -> Int64 {
        let response: WireDeleteRangeResponse = try await post("/v3/kv/deleterange", WireDeleteRangeRequest(key: WireBytes(key)))
        return response.deleted.orZero
    }

    /// Deletes one key given as a UTF-8 string.
    @discardableResult
    public func delete(key: String) async throws(EtcdError) -> Int64 {
        try await delete(key: Array(key.utf8))
    }

    /// Runs a transaction. A compare that fails is not an error: the failure branch runs and
    /// `succeeded` is false.
    /// - Parameter transaction: the compares and both branches.
    /// - Returns: which branch ran, the revision, and that branch's answers.
    /// - Throws: ``EtcdError``; `rejected` with gRPC code 3 for too many operations or a key
    ///   twice in one branch; `leaseNotFound` when the branch that runs puts with a lease that
    ///   is gone.
    public func txn(_ transaction: EtcdTransaction) async throws(EtcdError) -> EtcdTransactionResult {
        let response: WireTxnResponse = try await post("/v3/kv/txn", WireTxnRequest(transaction))
        var results: [EtcdOperationResult] = []
        for operation in response.responses ?? [] {
            guard let result = operation.domain else {
                throw EtcdError(.badResponse, endpoints: endpoints, message: "etcd answered a transaction with an empty operation result")
            }
            results.append(result)
        }
        return EtcdTransactionResult(succeeded: response.succeeded ?? false, revision: response.header?.revision.orZero ?? 0, responses: results)
    }

    /// The end of the key range that holds exactly the keys starting with `prefix`: the
    /// prefix with its last byte below 0xFF raised by one (and the bytes after it dropped),
    /// or `[0]`, meaning "to the end of the keyspace", when there is no such byte.
    public static func rangeEnd(ofPrefix prefix: [UInt8]) -> [UInt8] {
        var end = prefix
        while let last = end.last {
            if last < 0xFF {
                end[end.count - 1] = last + 1
                return end
            }
            end.removeLast()
        }
        return [0]
    }
}
