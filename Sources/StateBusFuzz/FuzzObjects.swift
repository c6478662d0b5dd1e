import StateBus
import StateBusWire

/// A struct-valued property, so writes with paths and the full Codable type check are
/// exercised, not just the plain kinds.
struct FuzzUser: Codable, Sendable, Equatable {
    var name: String
    var email: String
    var tags: [String]
}

/// The objects every fuzzed host serves.
///
/// `Target` takes the fuzzer's writes (its state may change: the host is the truth and a
/// replica must converge on it). `Sentinel` can never change through a view: its
/// properties are read-only or refused by a validator, so any change is a finding.
enum FuzzObjects {
    static let target = ObjectDefinition(
        "Target",
        properties: [
            PropertyDefinition("text", default: ""),
            PropertyDefinition("count", default: 0),
            PropertyDefinition("ratio", default: 0.5),
            PropertyDefinition("flag", default: false),
            PropertyDefinition(
                "user", default: FuzzUser(name: "anna", email: "anna@example.com", tags: ["a", "b"]),
                validate: { user in
                    user.email.contains("@") ? nil : "an email address needs an @"
                }),
            PropertyDefinition("any", kind: nil, default: .map(["list": .list([.int(1), .int(2)]), "name": .string("x")])),
            PropertyDefinition("durable", default: 0, persisted: true)
        ])

    static let sentinel = ObjectDefinition(
        "Sentinel",
        properties: [
            PropertyDefinition("secret", default: "s3cret", writable: false),
            PropertyDefinition("locked", default: 42, validate: { _ in "this property refuses every write" })
        ])

    static let all = [target, sentinel]

    /// Names the generators pick from: real ones, near misses and strangers.
    static let objectNames = ["Target", "Sentinel", "target", "Target\0", "", "Nope", "u/Target", String(repeating: "O", count: 300)]
    static let propertyNames = ["text", "count", "ratio", "flag", "user", "any", "durable", "secret", "locked", "", "nope", "text\0", "user.email"]
    static let viewIDs = ["fuzz-view-1", "fuzz-view-2", "", "\0", String(repeating: "v", count: 1000)]
}
