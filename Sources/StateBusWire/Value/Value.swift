import Foundation

/// A language-neutral value: what every property holds on the wire.
///
/// Any `Codable` Swift value converts to and from a `Value` with ``ValueEncoder`` and
/// ``ValueDecoder``; a client in another language reads the same eight kinds.
public enum Value: Hashable, Sendable {
    /// No value (`nil`).
    case null
    /// A boolean.
    case bool(Bool)
    /// A signed 64-bit integer (every Swift integer type encodes to this).
    case int(Int64)
    /// A 64-bit floating-point number.
    case double(Double)
    /// A UTF-8 string.
    case string(String)
    /// Raw bytes (`Data`).
    case bytes(Data)
    /// An ordered list.
    case list([Value])
    /// A map from string keys (structs, enums with payloads, `[String: T]`).
    case map([String: Value])

    /// The value's kind.
    public var kind: ValueKind {
        switch self {
        case .null: .null
        case .bool: .bool
        case .int: .int
        case .double: .double
        case .string: .string
        case .bytes: .bytes
        case .list: .list
        case .map: .map
        }
    }
}

/// The eight kinds of ``Value``.
public enum ValueKind: String, Sendable, CaseIterable, CustomStringConvertible {
    /// `nil`.
    case null
    /// A boolean.
    case bool
    /// A 64-bit integer.
    case int
    /// A 64-bit float.
    case double
    /// A string.
    case string
    /// Bytes.
    case bytes
    /// A list.
    case list
    /// A map.
    case map

    /// The kind's name.
    public var description: String { rawValue }
}

extension Value: CustomStringConvertible {
    /// A compact JSON-like rendering with sorted map keys, for logs, errors and tools.
    public var description: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .int(let value): return String(value)
        case .double(let value): return value.description
        case .string(let value): return Self.quoted(value)
        case .bytes(let data):
            let hex = data.prefix(16).map { String(format: "%02x", $0) }.joined()
            return "<\(data.count) bytes: \(hex)\(data.count > 16 ? "…" : "")>"
        case .list(let items): return "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .map(let entries):
            let body = entries.sorted { $0.key < $1.key }.map { "\(Self.quoted($0.key)): \($0.value)" }
            return "{" + body.joined(separator: ", ") + "}"
        }
    }

    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}

extension Value: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `nil` is `.null`.
    public init(nilLiteral: ()) { self = .null }
    /// `true` is `.bool(true)`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// `3` is `.int(3)`.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// `1.5` is `.double(1.5)`.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// `"a"` is `.string("a")`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// `[1, 2]` is `.list([1, 2])`.
    public init(arrayLiteral elements: Value...) { self = .list(elements) }
    /// `["a": 1]` is `.map(["a": 1])`.
    public init(dictionaryLiteral elements: (String, Value)...) {
        self = .map(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension Value: Codable {
    /// Encodes the value as itself, so a `Value` can sit inside a Codable model.
    public func encode(to encoder: any Encoder) throws {
        if let encoder = encoder as? _ValueEncoder {
            encoder.storeRaw(self)
            return
        }
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .bytes(let value): try container.encode(value)
        case .list(let items): try container.encode(items)
        case .map(let entries): try container.encode(entries)
        }
    }

    /// Decodes any value as itself.
    public init(from decoder: any Decoder) throws {
        if let decoder = decoder as? _ValueDecoder {
            self = decoder.value
            return
        }
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([Value].self) {
            self = .list(value)
        } else {
            self = .map(try container.decode([String: Value].self))
        }
    }
}
