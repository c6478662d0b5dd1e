import Foundation
import StateBusWire

/// Converts between command-line text and values.
enum ValueText {
    /// Parses a JSON value (`42`, `true`, `"text"`, `{"a": 1}`); with `string`, the text as is.
    static func parse(_ text: String, asString: Bool) throws -> Value {
        if asString { return .string(text) }
        do {
            return try JSONDecoder().decode(Value.self, from: Data(text.utf8))
        } catch {
            throw ValueTextError(text: text)
        }
    }

    /// The value as compact JSON with sorted keys (bytes as base64).
    static func json(_ value: Value) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return value.description }
        return String(decoding: data, as: UTF8.self)
    }

    /// A map of values as one JSON object.
    static func json(_ values: [String: Value]) -> String { json(.map(values)) }
}

/// Text that is not a JSON value.
struct ValueTextError: Error, CustomStringConvertible {
    let text: String
    var description: String {
        "'\(text)' is not a JSON value: write numbers and true/false as is, strings in double quotes ('\"hi\"'), or pass --string to send the text as a string"
    }
}
