import IdentifiedCollections
import StateBusWire

/// A model's own edit of elements of a keyed collection, found without encoding the whole
/// collection: what `ModelBus` sends for a setter that changed some elements' contents and
/// kept every id in its place (a toggle, a renamed item), the common edit of a list in a UI.
struct ElementWrites {
    /// The changes to send: each changed element's narrowest difference, by id.
    var changes: [PropertyChange] = []
    /// The same, as edits of the synced list (each element whole, at its index).
    var edits: [ElementEdit] = []

    /// At most this many changed elements are sent one by one; more go the general way.
    static let maxElements = 64

    /// The writes that turn `old` into `new`, or `nil` when the edit is not of that kind (an
    /// element added, removed or moved, too many changed, or an element whose encoding does
    /// not carry its id as `"id"`): then the whole collection is encoded and compared.
    init?<ID: Encodable, Element: Encodable & Equatable>(
        of property: String, from old: IdentifiedArray<ID, Element>, to new: IdentifiedArray<ID, Element>
    ) {
        guard old.count == new.count, old.ids == new.ids else { return nil }
        let encoder = ValueEncoder()
        for index in new.indices where old[index] != new[index] {
            guard edits.count < Self.maxElements, let id = try? encoder.encode(new.ids[index]), let before = try? encoder.encode(old[index]),
                let after = try? encoder.encode(new[index]), before.elementID == id, after.elementID == id
            else { return nil }
            guard let (path, part) = before.difference(to: after) else { continue }  // equal once encoded
            changes.append(PropertyChange(property, .replace, at: ValuePath([.id(id)] + path.components), element: part))
            edits.append(.replaced(index: index, element: after))
        }
    }
}
