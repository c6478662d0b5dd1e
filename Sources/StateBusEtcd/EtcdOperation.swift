/// One operation in a transaction's success or failure branch.
public enum EtcdOperation: Sendable, Equatable, Hashable {
    /// Puts `value` at `key`, attached to `lease` when given. A put without a lease detaches
    /// the key from any lease it had.
    case put(key: [UInt8], value: [UInt8], lease: Int64? = nil)
    /// Reads `key`, or the keys from `key` up to (not including) `rangeEnd` when given.
    case range(key: [UInt8], rangeEnd: [UInt8]? = nil)
    /// Deletes `key`, or the keys from `key` up to (not including) `rangeEnd` when given.
    case deleteRange(key: [UInt8], rangeEnd: [UInt8]? = nil)
}

/// The answer to one ``EtcdOperation`` of the branch that ran.
public enum EtcdOperationResult: Sendable, Equatable, Hashable {
    /// A put was applied at `revision`.
    case put(revision: Int64)
    /// A range found `keyValues`.
    case range(keyValues: [EtcdKeyValue])
    /// A delete removed `deleted` keys.
    case deleteRange(deleted: Int64)
}
