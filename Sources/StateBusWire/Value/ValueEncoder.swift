import Foundation

/// Encodes any `Encodable` value to a ``Value``, directly, with no JSON on the way.
///
/// Rules: every integer type becomes `.int` (a `UInt64` above `Int64.max` throws), floats
/// become `.double`, `Data` becomes `.bytes`, `Date` becomes `.double` seconds since 1970,
/// `UUID` its `uuidString`, `URL` its `absoluteString`, `nil` becomes `.null`, and structs,
/// classes and enums become `.map`s of their coding keys.
public struct ValueEncoder: Sendable {
    /// Creates an encoder.
    public init() {}

    /// Encodes a value.
    /// - Parameter value: any `Encodable` value.
    /// - Returns: its ``Value``.
    /// - Throws: `EncodingError.invalidValue` for an unsigned integer beyond `Int64.max`.
    public func encode<T: Encodable>(_ value: T) throws -> Value {
        // The host encodes plain values on its hot path: skip the container machinery.
        if let plain = try Self.plainValue(value, codingPath: []) { return plain }
        let encoder = _ValueEncoder(codingPath: [])
        try value.encode(to: encoder)
        return encoder.node.build()
    }

    /// The value of plain and special types, or `nil` for types that encode themselves.
    static func plainValue<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws -> Value? {
        switch value {
        case let value as Value: return value
        case let value as String: return .string(value)
        case let value as Bool: return .bool(value)
        case let value as Int: return .int(Int64(value))
        case let value as Int64: return .int(value)
        case let value as Double: return .double(value)
        case let value as Int32: return .int(Int64(value))
        case let value as Int16: return .int(Int64(value))
        case let value as Int8: return .int(Int64(value))
        case let value as UInt8: return .int(Int64(value))
        case let value as UInt16: return .int(Int64(value))
        case let value as UInt32: return .int(Int64(value))
        case let value as UInt: return try unsigned(UInt64(value), codingPath: codingPath)
        case let value as UInt64: return try unsigned(value, codingPath: codingPath)
        case let value as Float: return .double(Double(value))
        case let value as Data: return .bytes(value)
        case let value as Date: return .double(value.timeIntervalSince1970)
        case let value as UUID: return .string(value.uuidString)
        case let value as URL: return .string(value.absoluteString)
        default: return nil
        }
    }

    private static func unsigned(_ value: UInt64, codingPath: [any CodingKey]) throws -> Value {
        guard value <= UInt64(Int64.max) else {
            throw EncodingError.invalidValue(
                value,
                .init(
                    codingPath: codingPath,
                    debugDescription: "\(value) at \(renderPath(codingPath)) is larger than Int64.max, the largest integer a Value holds"
                ))
        }
        return .int(Int64(value))
    }
}

/// Renders a coding path as `user.items[2].name`, or "the top level".
func renderPath(_ path: [any CodingKey]) -> String {
    guard !path.isEmpty else { return "the top level" }
    var text = ""
    for key in path {
        if let index = key.intValue, key is IndexKey || key.stringValue == "Index \(index)" {
            text += "[\(index)]"
        } else {
            text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
        }
    }
    return text
}

/// A tree under construction: containers add to it by reference, `build` makes the Value.
final class EncodingNode {
    enum Content {
        case empty
        case value(Value)
        case map([String: EncodingNode])
        case list([EncodingNode])
    }
    var content: Content = .empty

    func build() -> Value {
        switch content {
        case .empty: return .map([:])
        case .value(let value): return value
        case .map(let entries): return .map(entries.mapValues { $0.build() })
        case .list(let items): return .list(items.map { $0.build() })
        }
    }
}

struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { return nil }
    init?(intValue: Int) { self.intValue = intValue }
}

final class _ValueEncoder: Encoder {
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    let node: EncodingNode

    init(codingPath: [any CodingKey], node: EncodingNode = EncodingNode()) {
        self.codingPath = codingPath
        self.node = node
    }

    func storeRaw(_ value: Value) { node.content = .value(value) }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .map = node.content {} else { node.content = .map([:]) }
        return KeyedEncodingContainer(KeyedContainer<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .list = node.content {} else { node.content = .list([]) }
        return UnkeyedContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleContainer(node: node, codingPath: codingPath)
    }

    /// Encodes a child value into `node`.
    static func encode<T: Encodable>(_ value: T, into node: EncodingNode, codingPath: [any CodingKey]) throws {
        if let plain = try ValueEncoder.plainValue(value, codingPath: codingPath) {
            node.content = .value(plain)
            return
        }
        try value.encode(to: _ValueEncoder(codingPath: codingPath, node: node))
    }

    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: EncodingNode
        let codingPath: [any CodingKey]

        private func child(_ key: Key) -> EncodingNode {
            guard case .map(var entries) = node.content else { return EncodingNode() }
            if let existing = entries[key.stringValue] { return existing }
            // Emptied first, so `entries` is the only reference and grows in place: a copy
            // per field would make encoding quadratic in the number of fields.
            node.content = .empty
            let child = EncodingNode()
            entries[key.stringValue] = child
            node.content = .map(entries)
            return child
        }

        mutating func encodeNil(forKey key: Key) throws { child(key).content = .value(.null) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try _ValueEncoder.encode(value, into: child(key), codingPath: codingPath + [key])
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            _ValueEncoder(codingPath: codingPath + [key], node: child(key)).container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            _ValueEncoder(codingPath: codingPath + [key], node: child(key)).unkeyedContainer()
        }
        mutating func superEncoder() -> any Encoder {
            _ValueEncoder(codingPath: codingPath, node: childNamed("super"))
        }
        mutating func superEncoder(forKey key: Key) -> any Encoder {
            _ValueEncoder(codingPath: codingPath + [key], node: child(key))
        }
        private func childNamed(_ name: String) -> EncodingNode {
            guard case .map(var entries) = node.content else { return EncodingNode() }
            node.content = .empty  // see child(_:)
            let child = entries[name] ?? EncodingNode()
            entries[name] = child
            node.content = .map(entries)
            return child
        }
    }

    struct UnkeyedContainer: UnkeyedEncodingContainer {
        let node: EncodingNode
        let codingPath: [any CodingKey]
        var count: Int {
            if case .list(let items) = node.content { return items.count }
            return 0
        }

        private func append() -> EncodingNode {
            let child = EncodingNode()
            if case .list(var items) = node.content {
                // Emptied first, so `items` is the only reference and grows in place: a copy
                // per element would make encoding an array quadratic in its length.
                node.content = .empty
                items.append(child)
                node.content = .list(items)
            }
            return child
        }

        mutating func encodeNil() throws { append().content = .value(.null) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            let path = codingPath + [IndexKey(count)]
            try _ValueEncoder.encode(value, into: append(), codingPath: path)
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            let path = codingPath + [IndexKey(count)]
            return _ValueEncoder(codingPath: path, node: append()).container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let path = codingPath + [IndexKey(count)]
            return _ValueEncoder(codingPath: path, node: append()).unkeyedContainer()
        }
        mutating func superEncoder() -> any Encoder {
            let path = codingPath + [IndexKey(count)]
            return _ValueEncoder(codingPath: path, node: append())
        }
    }

    struct SingleContainer: SingleValueEncodingContainer {
        let node: EncodingNode
        let codingPath: [any CodingKey]
        mutating func encodeNil() throws { node.content = .value(.null) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            try _ValueEncoder.encode(value, into: node, codingPath: codingPath)
        }
    }
}
