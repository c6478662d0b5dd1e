import Foundation
import StateBusWire

/// The differences between an expected and an actual set of property values, down to the
/// field: `user.email: expected "a@b.c", got "x"`.
public struct StateDiff: Sendable, Hashable, CustomStringConvertible {
    /// One value that differs.
    public struct Difference: Sendable, Hashable, CustomStringConvertible {
        /// Where: the property, and the path into it for nested values.
        public let path: String
        /// The expected value; `nil` when the actual state has a value the expected lacks.
        public let expected: Value?
        /// The actual value; `nil` when it is missing.
        public let actual: Value?

        /// `path: expected X, got Y`.
        public var description: String {
            switch (expected, actual) {
            case (let expected?, let actual?): "\(path): expected \(expected), got \(actual)"
            case (let expected?, nil): "\(path): missing (expected \(expected))"
            case (nil, let actual?): "\(path): unexpected (got \(actual))"
            case (nil, nil): "\(path): both missing"
            }
        }
    }

    /// Every difference, sorted by path.
    public let differences: [Difference]

    /// Compares two sets of values, descending into maps so a nested difference names its
    /// field; lists and other values are compared whole.
    public init(expected: [String: Value], actual: [String: Value]) {
        var differences: [Difference] = []
        Self.compare(expected, actual, prefix: "", into: &differences)
        self.differences = differences.sorted { $0.path < $1.path }
    }

    /// Whether the two states are equal.
    public var isEmpty: Bool { differences.isEmpty }

    /// One difference per line, indented; `no differences` when equal.
    public var description: String {
        isEmpty ? "no differences" : differences.map { "  \($0)" }.joined(separator: "\n")
    }

    private static func compare(_ expected: [String: Value], _ actual: [String: Value], prefix: String, into differences: inout [Difference]) {
        for key in Set(expected.keys).union(actual.keys) {
            let path = prefix.isEmpty ? key : "\(prefix).\(key)"
            switch (expected[key], actual[key]) {
            case (.map(let left)?, .map(let right)?):
                compare(left, right, prefix: path, into: &differences)
            case (let left?, let right?) where !sameValue(left, right):
                differences.append(Difference(path: path, expected: left, actual: right))
            case (nil, let right?):
                differences.append(Difference(path: path, expected: nil, actual: right))
            case (let left?, nil):
                differences.append(Difference(path: path, expected: left, actual: nil))
            default:
                break
            }
        }
    }
}

/// Two nodes that should hold the same state and do not.
public struct StateMismatch: Error, Sendable, CustomStringConvertible {
    /// The node taken as the truth.
    public let expectedName: String
    /// The node that differs.
    public let actualName: String
    /// The expected node's state.
    public let expected: ObservedState?
    /// The differing node's state.
    public let actual: ObservedState?

    /// What differs: position (epoch, sequence, liveness) and values, field by field.
    public var description: String {
        guard let expected else { return "\(expectedName) has no state yet" }
        guard let actual else { return "\(actualName) has no state yet (\(expectedName) is \(expected))" }
        var lines = ["\(actualName) differs from \(expectedName):"]
        if actual.epoch != expected.epoch { lines.append("  epoch: expected \(expected.epoch), got \(actual.epoch)") }
        if actual.sequence != expected.sequence { lines.append("  sequence: expected \(expected.sequence), got \(actual.sequence)") }
        if !actual.isLive { lines.append("  not live") }
        let diff = StateDiff(expected: expected.values, actual: actual.values)
        if !diff.isEmpty { lines.append(diff.description) }
        return lines.joined(separator: "\n")
    }

    /// Whether the two states agree (same epoch, sequence and values, the actual one live).
    static func agree(_ expected: ObservedState?, _ actual: ObservedState?) -> Bool {
        guard let expected, let actual else { return false }
        return actual.isLive && expected.isLive && actual.epoch == expected.epoch
            && actual.sequence == expected.sequence && StateDiff(expected: expected.values, actual: actual.values).isEmpty
    }
}

/// Whether two values are the same once they have crossed JSON, as a view process's printed
/// state has: there a whole `Double` prints as an integer (`1.0` as `1`) and bytes as base64
/// text, so `.int(1)` matches `.double(1)` and `.string(base64)` matches `.bytes`.
func sameValue(_ left: Value, _ right: Value) -> Bool {
    switch (left, right) {
    case (.int(let integer), .double(let double)), (.double(let double), .int(let integer)):
        return Double(integer) == double
    case (.bytes(let bytes), .string(let text)), (.string(let text), .bytes(let bytes)):
        return bytes.base64EncodedString() == text
    case (.list(let first), .list(let second)):
        return first.count == second.count && zip(first, second).allSatisfy(sameValue)
    case (.map(let first), .map(let second)):
        return first.count == second.count && first.allSatisfy { key, value in second[key].map { sameValue(value, $0) } ?? false }
    default:
        return left == right
    }
}
