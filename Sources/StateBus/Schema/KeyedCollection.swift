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
