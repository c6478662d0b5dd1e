import IdentifiedCollections
import StateBusWire

/// A property type the host checks element by element when a write changes one element: an
/// `IdentifiedArray` of a `Codable` element. Decoding the whole collection for every element
/// written would cost time in the size of the collection; a keyed collection's invariant
/// (unique ids) is kept by the element operations themselves.
protocol KeyedCollectionProperty {
    /// Decodes an element as the collection's element type and returns its canonical form.
    static func normalizeElement(_ value: Value) throws -> Value
}

extension IdentifiedArray: KeyedCollectionProperty where Element: Codable {
    static func normalizeElement(_ value: Value) throws -> Value {
        try ValueEncoder().encode(try ValueDecoder().decode(Element.self, from: value))
    }
}

/// A check of one element of a keyed collection (``ValidateElement(_:)``): decodes the
/// element as its type and returns the rule's reason to reject it, or `nil`.
public struct ElementValidator: Sendable {
    let check: @Sendable (Value) -> String?

    /// Wraps a rule over the element's type.
    public init<Element: Decodable & Sendable>(_ rule: @escaping @Sendable (Element) -> String?) {
        check = { value in
            guard let element = try? ValueDecoder().decode(Element.self, from: value) else { return "not a \(Element.self)" }
            return rule(element)
        }
    }
}
