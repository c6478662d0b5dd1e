import IdentifiedCollections
import StateBusWire

// What a `@SharedModel`, on a view or on the host, does with the element edits its replica or
// the host's store made in place (``ElementEdit``): repeats them on the property itself, one
// element decoded per replace or insert, instead of decoding the whole collection for each
// change. The code `@SharedModel` generates calls these; they
// are not called by hand.

/// A property of a type that cannot repeat element edits: `false`, so the model takes the
/// property's whole value instead.
public func _$repeatElementEdits<Property>(_ edits: [ElementEdit], on property: inout Property) -> Bool { false }

/// Repeats element edits on an `IdentifiedArray` (a keyed collection). A replaced element
/// must keep its id, an inserted one must be new.
/// - Returns: `false` when an edit does not fit the array (an index outside it, an element
///   that does not decode, another id): the array may have taken some edits, and the model
///   takes the property's whole value instead.
public func _$repeatElementEdits<ID, Element: Decodable>(_ edits: [ElementEdit], on array: inout IdentifiedArray<ID, Element>) -> Bool {
    for edit in edits {
        switch edit {
        case .replaced(let index, let value):
            guard array.indices.contains(index), let element = try? ValueDecoder().decode(Element.self, from: value),
                element[keyPath: array.id] == array.ids[index]
            else { return false }
            array[index] = element
        case .inserted(let index, let value):
            guard (0...array.count).contains(index), let element = try? ValueDecoder().decode(Element.self, from: value),
                array.insert(element, at: index).inserted
            else { return false }
        case .removed(let index):
            guard array.indices.contains(index) else { return false }
            array.remove(at: index)
        case .moved(let from, let to):
            guard array.indices.contains(from), array.indices.contains(to) else { return false }
            array.insert(array.remove(at: from), at: to)
        }
    }
    return true
}

/// Repeats element edits on an `Array` whose elements have ids (a list of structs with an
/// `id` travels as a keyed collection too).
/// - Returns: `false` when an edit does not fit the array (an index outside it, an element
///   that does not decode): the model takes the property's whole value instead.
public func _$repeatElementEdits<Element: Decodable>(_ edits: [ElementEdit], on array: inout [Element]) -> Bool {
    repeatElementEdits(edits, on: &array) { _, _ in true }
}

/// ``_$repeatElementEdits(_:on:)`` for an `Array` of `Identifiable` elements: a replaced
/// element must also keep its id.
public func _$repeatElementEdits<Element: Decodable & Identifiable>(_ edits: [ElementEdit], on array: inout [Element]) -> Bool {
    repeatElementEdits(edits, on: &array) { $0.id == $1.id }
}

private func repeatElementEdits<Element: Decodable>(
    _ edits: [ElementEdit], on array: inout [Element], isSameElement: (Element, Element) -> Bool
) -> Bool {
    for edit in edits {
        switch edit {
        case .replaced(let index, let value):
            guard array.indices.contains(index), let element = try? ValueDecoder().decode(Element.self, from: value),
                isSameElement(element, array[index])
            else { return false }
            array[index] = element
        case .inserted(let index, let value):
            guard (0...array.count).contains(index), let element = try? ValueDecoder().decode(Element.self, from: value) else { return false }
            array.insert(element, at: index)
        case .removed(let index):
            guard array.indices.contains(index) else { return false }
            array.remove(at: index)
        case .moved(let from, let to):
            guard array.indices.contains(from), array.indices.contains(to) else { return false }
            array.insert(array.remove(at: from), at: to)
        }
    }
    return true
}
