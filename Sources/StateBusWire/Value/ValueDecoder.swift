import Foundation

/// Decodes a ``Value`` into any `Decodable` type, strictly enough for a host to type-check
/// writes with it.
///
/// A string never decodes as a number, an integer out of the target type's range is an
/// error, and a `.double` with a fraction is not an integer. Two leniencies help clients in
/// other languages: `.int` decodes into `Double`/`Float`, and an integral `.double` into
/// integer types. Errors are `DecodingError`s whose description names the path and what was
/// expected and found, such as `expected int at user.age, found string "x"`.
public struct ValueDecoder: Sendable {
    /// Creates a decoder.
    public init() {}

    /// Decodes a value.
    /// - Parameters:
    ///   - type: the type to decode.
    ///   - value: the value to read.
    /// - Returns: the decoded value.
    /// - Throws: `DecodingError` naming the path and the mismatch.
    public func decode<T: Decodable>(_ type: T.Type, from value: Value) throws -> T {
        try _ValueDecoder.decode(type, from: value, codingPath: [])
    }
}

final class _ValueDecoder: Decoder {
    let value: Value
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(value: Value, codingPath: [any CodingKey]) {
        self.value = value
        self.codingPath = codingPath
    }

    static func mismatch(_ type: Any.Type, expected: String, found: Value, codingPath: [any CodingKey]) -> DecodingError {
        let shown = found.description.count > 80 ? String(found.description.prefix(80)) + "…" : found.description
        return DecodingError.typeMismatch(
            type,
            .init(
                codingPath: codingPath,
                debugDescription: "expected \(expected) at \(renderPath(codingPath)), found \(found.kind) \(shown)"
            ))
    }

    static func decode<T: Decodable>(_ type: T.Type, from value: Value, codingPath: [any CodingKey]) throws -> T {
        if let special = try decodeSpecial(type, from: value, codingPath: codingPath) { return special }
        return try T(from: _ValueDecoder(value: value, codingPath: codingPath))
    }

    private static func decodeSpecial<T>(_ type: T.Type, from value: Value, codingPath: [any CodingKey]) throws -> T? {
        switch type {
        case is Value.Type: return value as? T
        case is String.Type: return try string(value, codingPath) as? T
        case is Bool.Type: return try bool(value, codingPath) as? T
        case is Int.Type: return try integer(Int.self, value, codingPath) as? T
        case is Int64.Type: return try integer(Int64.self, value, codingPath) as? T
        case is Int32.Type: return try integer(Int32.self, value, codingPath) as? T
        case is Int16.Type: return try integer(Int16.self, value, codingPath) as? T
        case is Int8.Type: return try integer(Int8.self, value, codingPath) as? T
        case is UInt.Type: return try integer(UInt.self, value, codingPath) as? T
        case is UInt64.Type: return try integer(UInt64.self, value, codingPath) as? T
        case is UInt32.Type: return try integer(UInt32.self, value, codingPath) as? T
        case is UInt16.Type: return try integer(UInt16.self, value, codingPath) as? T
        case is UInt8.Type: return try integer(UInt8.self, value, codingPath) as? T
        case is Double.Type: return try double(value, codingPath) as? T
        case is Float.Type: return Float(try double(value, codingPath)) as? T
        case is Data.Type:
            guard case .bytes(let data) = value else { throw mismatch(type, expected: "bytes", found: value, codingPath: codingPath) }
            return data as? T
        case is Date.Type:
            switch value {
            case .double(let seconds): return Date(timeIntervalSince1970: seconds) as? T
            case .int(let seconds): return Date(timeIntervalSince1970: Double(seconds)) as? T
            default: throw mismatch(type, expected: "a date (seconds since 1970)", found: value, codingPath: codingPath)
            }
        case is UUID.Type:
            guard case .string(let text) = value, let uuid = UUID(uuidString: text) else {
                throw mismatch(type, expected: "a UUID string", found: value, codingPath: codingPath)
            }
            return uuid as? T
        case is URL.Type:
            guard case .string(let text) = value, let url = URL(string: text) else {
                throw mismatch(type, expected: "a URL string", found: value, codingPath: codingPath)
            }
            return url as? T
        default:
            return nil
        }
    }

    static func string(_ value: Value, _ codingPath: [any CodingKey]) throws -> String {
        guard case .string(let text) = value else { throw mismatch(String.self, expected: "string", found: value, codingPath: codingPath) }
        return text
    }

    static func bool(_ value: Value, _ codingPath: [any CodingKey]) throws -> Bool {
        guard case .bool(let flag) = value else { throw mismatch(Bool.self, expected: "bool", found: value, codingPath: codingPath) }
        return flag
    }

    static func double(_ value: Value, _ codingPath: [any CodingKey]) throws -> Double {
        switch value {
        case .double(let number): return number
        case .int(let number): return Double(number)
        default: throw mismatch(Double.self, expected: "double", found: value, codingPath: codingPath)
        }
    }

    static func integer<I: FixedWidthInteger>(_ type: I.Type, _ value: Value, _ codingPath: [any CodingKey]) throws -> I {
        switch value {
        case .int(let number):
            guard let result = I(exactly: number) else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: codingPath, debugDescription: "\(number) at \(renderPath(codingPath)) is out of range for \(I.self)"))
            }
            return result
        case .double(let number):
            guard let result = I(exactly: number) else {
                throw mismatch(type, expected: "an integer fitting \(I.self)", found: value, codingPath: codingPath)
            }
            return result
        default:
            throw mismatch(type, expected: "int", found: value, codingPath: codingPath)
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .map(let entries) = value else {
            throw Self.mismatch([String: Value].self, expected: "map", found: value, codingPath: codingPath)
        }
        return KeyedDecodingContainer(KeyedContainer<Key>(entries: entries, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .list(let items) = value else {
            throw Self.mismatch([Value].self, expected: "list", found: value, codingPath: codingPath)
        }
        return UnkeyedContainer(items: items, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleContainer(value: value, codingPath: codingPath)
    }

    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let entries: [String: Value]
        let codingPath: [any CodingKey]
        var allKeys: [Key] { entries.keys.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { entries[key.stringValue] != nil }

        private func entry(_ key: Key) throws -> Value {
            guard let value = entries[key.stringValue] else {
                throw DecodingError.keyNotFound(
                    key,
                    .init(
                        codingPath: codingPath,
                        debugDescription: "missing key '\(key.stringValue)' at \(renderPath(codingPath + [key]))"
                    ))
            }
            return value
        }

        func decodeNil(forKey key: Key) throws -> Bool { try entry(key) == .null }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            let value = try entry(key)
            if value == .null, !(T.self is any _OptionalDecodingMarker.Type), T.self != Value.self {
                throw DecodingError.valueNotFound(
                    type,
                    .init(
                        codingPath: codingPath + [key],
                        debugDescription: "expected \(T.self) at \(renderPath(codingPath + [key])), found null"
                    ))
            }
            return try _ValueDecoder.decode(type, from: value, codingPath: codingPath + [key])
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            try _ValueDecoder(value: entry(key), codingPath: codingPath + [key]).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try _ValueDecoder(value: entry(key), codingPath: codingPath + [key]).unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder {
            _ValueDecoder(value: entries["super"] ?? .null, codingPath: codingPath)
        }

        func superDecoder(forKey key: Key) throws -> any Decoder {
            _ValueDecoder(value: entries[key.stringValue] ?? .null, codingPath: codingPath + [key])
        }
    }

    struct UnkeyedContainer: UnkeyedDecodingContainer {
        let items: [Value]
        let codingPath: [any CodingKey]
        var currentIndex = 0
        var count: Int? { items.count }
        var isAtEnd: Bool { currentIndex >= items.count }

        private mutating func next<T>(_ type: T.Type) throws -> (Value, [any CodingKey]) {
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(
                    type,
                    .init(
                        codingPath: codingPath + [IndexKey(currentIndex)],
                        debugDescription: "the list at \(renderPath(codingPath)) has only \(items.count) elements"
                    ))
            }
            defer { currentIndex += 1 }
            return (items[currentIndex], codingPath + [IndexKey(currentIndex)])
        }

        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd, items[currentIndex] == .null else { return false }
            currentIndex += 1
            return true
        }

        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            let (value, path) = try next(type)
            if value == .null, !(T.self is any _OptionalDecodingMarker.Type), T.self != Value.self {
                throw DecodingError.valueNotFound(
                    type, .init(codingPath: path, debugDescription: "expected \(T.self) at \(renderPath(path)), found null"))
            }
            return try _ValueDecoder.decode(type, from: value, codingPath: path)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            let (value, path) = try next(type)
            return try _ValueDecoder(value: value, codingPath: path).container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            let (value, path) = try next([Value].self)
            return try _ValueDecoder(value: value, codingPath: path).unkeyedContainer()
        }

        mutating func superDecoder() throws -> any Decoder {
            let (value, path) = try next(Value.self)
            return _ValueDecoder(value: value, codingPath: path)
        }
    }

    struct SingleContainer: SingleValueDecodingContainer {
        let value: Value
        let codingPath: [any CodingKey]
        func decodeNil() -> Bool { value == .null }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            if value == .null, !(T.self is any _OptionalDecodingMarker.Type), T.self != Value.self {
                throw DecodingError.valueNotFound(
                    type, .init(codingPath: codingPath, debugDescription: "expected \(T.self) at \(renderPath(codingPath)), found null"))
            }
            return try _ValueDecoder.decode(type, from: value, codingPath: codingPath)
        }
    }
}

/// Lets the decoder tell `Optional` types apart, to allow null only where it is valid.
public protocol _OptionalDecodingMarker {}
extension Optional: _OptionalDecodingMarker {}
