/// An etcd transaction: if every compare holds, the success operations run, otherwise the
/// failure ones, atomically. Each list may hold at most 128 entries (etcd's `--max-txn-ops`),
/// and one branch may not touch a key twice.
public struct EtcdTransaction: Sendable, Equatable, Hashable {
    /// The conditions, all of which must hold for `success` to run.
    public var compares: [EtcdCompare]
    /// What runs when every compare holds.
    public var success: [EtcdOperation]
    /// What runs otherwise.
    public var failure: [EtcdOperation]

    /// Creates a transaction.
    public init(compares: [EtcdCompare], success: [EtcdOperation], failure: [EtcdOperation] = []) {
        self.compares = compares
        self.success = success
        self.failure = failure
    }
}

/// What a transaction did.
public struct EtcdTransactionResult: Sendable, Equatable, Hashable {
    /// Whether every compare held, so that the success branch ran.
    public var succeeded: Bool
    /// The store's revision after the transaction (the revision of its writes, if any).
    public var revision: Int64
    /// The answers of the branch that ran, in order.
    public var responses: [EtcdOperationResult]

    /// Creates a result.
    public init(succeeded: Bool, revision: Int64, responses: [EtcdOperationResult]) {
        self.succeeded = succeeded
        self.revision = revision
        self.responses = responses
    }
}
