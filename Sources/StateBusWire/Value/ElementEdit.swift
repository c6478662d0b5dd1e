/// What an element operation did to a list, and where
/// (``Value/applyElementOperation(_:_:at:position:positions:)``).
///
/// A holder of the same list as another type, such as a model's `IdentifiedArray`, repeats
/// the edit to stay equal to the list without decoding all of it: one element decoded for a
/// replace or an insert, none for a remove or a move.
public enum ElementEdit: Sendable, Hashable {
    /// The element at `index` became `element`, with the same id.
    case replaced(index: Int, element: Value)
    /// `element` was inserted at `index`.
    case inserted(index: Int, element: Value)
    /// The element at `index` was removed.
    case removed(index: Int)
    /// The element at `from` was removed and inserted again at `to` (an index in the list
    /// without it, as `Array.insert(_:at:)` takes it after `Array.remove(at:)`).
    case moved(from: Int, to: Int)
}

extension Value {
    /// Repeats on this list an edit that another copy of it went through
    /// (``applyElementOperation(_:_:at:position:positions:)``), in place when nothing else
    /// holds the list.
    /// - Returns: `false` when this is not a list or the edit's index is outside it: nothing
    ///   changed, and the copies no longer match (take the other copy whole).
    public mutating func applyElementEdit(_ edit: ElementEdit) -> Bool {
        guard case .list(var items) = self else { return false }
        switch edit {
        case .replaced(let index, _), .removed(let index):
            guard items.indices.contains(index) else { return false }
        case .inserted(let index, _):
            guard (0...items.count).contains(index) else { return false }
        case .moved(let from, let to):
            guard items.indices.contains(from), items.indices.contains(to) else { return false }
        }
        // `items` is now the list's only holder (unless a reader holds a copy).
        self = .null
        switch edit {
        case .replaced(let index, let element): items[index] = element
        case .inserted(let index, let element): items.insert(element, at: index)
        case .removed(let index): items.remove(at: index)
        case .moved(let from, let to): items.insert(items.remove(at: from), at: to)
        }
        self = .list(items)
        return true
    }
}
