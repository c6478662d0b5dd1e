/// One condition of a transaction: a key's revision, version, value or lease compared with a
/// given one. A missing key has create, mod revision, version and lease 0, and no value (so
/// a value compare with `""` is false for it).
public struct EtcdCompare: Sendable, Equatable, Hashable {
    /// What of the key is compared, with the value to compare against.
    public enum Target: Sendable, Equatable, Hashable {
        /// The key's create revision (0 when the key does not exist).
        case createRevision(Int64)
        /// The key's last modification revision.
        case modRevision(Int64)
        /// The key's version (puts since creation).
        case version(Int64)
        /// The key's value.
        case value([UInt8])
        /// The lease the key is attached to (0 for none or a missing key).
        case lease(Int64)
    }

    /// How the key's current value relates to the target's.
    public enum Result: String, Sendable, Equatable, Hashable {
        /// Equal.
        case equal = "EQUAL"
        /// Not equal.
        case notEqual = "NOT_EQUAL"
        /// The key's value is greater than the target's.
        case greater = "GREATER"
        /// The key's value is less than the target's.
        case less = "LESS"
    }

    /// The key compared.
    public var key: [UInt8]
    /// What is compared, and with what.
    public var target: Target
    /// The relation that must hold.
    public var result: Result

    /// Creates a compare: `target` of `key` must be in relation `result` to the target's value.
    public init(key: [UInt8], _ target: Target, _ result: Result = .equal) {
        self.key = key
        self.target = target
        self.result = result
    }

    /// Creates a compare on a key given as a UTF-8 string.
    public init(key: String, _ target: Target, _ result: Result = .equal) {
        self.init(key: Array(key.utf8), target, result)
    }

    /// The compare that holds when `key` does not exist (create revision 0).
    public static func missing(_ key: [UInt8]) -> EtcdCompare {
        EtcdCompare(key: key, .createRevision(0), .equal)
    }
}
