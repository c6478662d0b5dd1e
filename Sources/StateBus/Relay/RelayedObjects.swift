/// The objects a relay relays: a copy of each (``ObjectCopy``), by name, and each one's
/// name by the index its upstream's runs and snapshot parts carry.
struct RelayedObjects {
    /// Each relayed object's copy, by name. Changed in place (`copies[name]!.apply(…)`): a
    /// second holder of a copy's values would make an element change copy a whole
    /// collection.
    var copies: [String: ObjectCopy] = [:]
    /// The relayed objects' names by the upstream's object index.
    private(set) var names: [Int: String] = [:]

    /// Relays these copies from now on (a new upstream welcome).
    mutating func replace(with copies: [ObjectCopy]) {
        self.copies = Dictionary(copies.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        names = Dictionary(copies.map { ($0.index, $0.name) }, uniquingKeysWith: { first, _ in first })
    }

    /// Whether every copy holds its upstream's state.
    var allSynced: Bool { copies.values.allSatisfy(\.isSynced) }
}
