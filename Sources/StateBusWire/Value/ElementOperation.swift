/// What a change does at its path, for lists: a keyed collection (a list of maps with an
/// `"id"` field, as `IdentifiedArray` encodes) changes element by element, so two views
/// editing different elements both keep their edit.
public enum ElementOperation: String, Sendable, Hashable, CaseIterable {
    /// The part at the path becomes the change's value (every change before collections).
    case replace
    /// The path leads to a list: the value is inserted at the change's position (past the
    /// end: at the end). An element whose id is already in the list is refused.
    case insert
    /// The element at the path (by id or index) is removed.
    case remove
    /// The element at the path (by id or index) moves to the change's position.
    case move
}
