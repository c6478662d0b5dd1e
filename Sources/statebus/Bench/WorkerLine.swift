import StateBusCommandLine

/// One line a worker prints: `bench <event> key=value key=value …` (values have no spaces).
struct WorkerLine: Sendable {
    /// The word after `bench`: `ready`, `result`, `failed`, ….
    let event: String
    /// The `key=value` words that follow, by key.
    let fields: [String: String]

    /// Parses a line, or `nil` when it is not a worker line (logs, warnings).
    init?(_ line: String) {
        let words = line.split(separator: " ")
        guard words.count >= 2, words[0] == "bench" else { return nil }
        event = String(words[1])
        var fields: [String: String] = [:]
        for word in words.dropFirst(2) {
            guard let equals = word.firstIndex(of: "=") else { continue }
            fields[String(word[..<equals])] = String(word[word.index(after: equals)...])
        }
        self.fields = fields
    }

    /// Formats a worker line and writes it to standard output at once (the bench waits for it).
    static func emit(_ event: String, _ fields: KeyValuePairs<String, any CustomStringConvertible>) {
        let text = (["bench", event] + fields.map { "\($0.key)=\($0.value)" }).joined(separator: " ")
        StateBusCommandLine.emit(text)
    }

    /// A field read as an `Int`, or `nil` when it is missing or not a number.
    func int(_ key: String) -> Int? { fields[key].flatMap { Int($0) } }
    /// A field read as a `UInt64`, or `nil` when it is missing or not a number.
    func uint(_ key: String) -> UInt64? { fields[key].flatMap { UInt64($0) } }
    /// Whether a field is `true`; a missing field is `false`.
    func bool(_ key: String) -> Bool { fields[key] == "true" }
}
