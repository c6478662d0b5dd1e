import StateBusWire

/// What an object's values went through since their follower (a model's bus) last looked:
/// the element edits made in place, in order, and the properties that changed any other way.
///
/// It lets a `@SharedModel`, on a view or on the host, repeat a one-element change of a large
/// keyed collection on its `IdentifiedArray` (one element decoded) instead of comparing and
/// decoding the whole collection for every change, and it keeps the bus from holding a copy
/// of the list that makes the next change in place copy it. Kept only while followed
/// (``ReplicaState/follow()``, ``ObjectStore/follow()``), under the lock of the values it
/// describes, so the follower reads the entries and the values they lead to together.
///
/// Bounded in entries and bytes: past either bound it keeps only the names of the properties
/// that changed, and the follower takes those whole, as without a journal. Nothing is lost,
/// it only costs the follower more.
struct ElementJournal: Sendable {
    /// The entries a follower takes at once.
    struct Taken: Sendable {
        /// Each property's element edits, in order: repeat them on the follower's copy.
        var edits: [String: [ElementEdit]] = [:]
        /// Properties that changed some other way (or whose edits did not fit the bounds):
        /// take their values whole.
        var replaced: Set<String> = []

        /// What the follower gets: the edits to repeat, and the values of the properties
        /// taken whole (those ``replaced``, and `whole`: properties the follower could not
        /// repeat edits on), none of whose edits.
        /// - Parameter value: a property's value now; `nil` leaves it out.
        func handedOver(whole: Set<String>, value: (String) -> Value?) -> (edits: [String: [ElementEdit]], values: [String: Value]) {
            var edits = self.edits
            var values: [String: Value] = [:]
            for name in replaced.union(whole) {
                edits[name] = nil
                values[name] = value(name)
            }
            return (edits, values)
        }
    }

    /// At most this many edits are kept between two takes.
    static let maxEdits = 4096
    /// At most this many bytes of edited elements are kept between two takes.
    static let maxBytes = 4 << 20

    private var taken = Taken()
    private var editCount = 0
    private var bytes = 0

    /// Records an element edit of `property` made in place.
    mutating func record(_ edit: ElementEdit, of property: String) {
        guard !taken.replaced.contains(property) else { return }  // it is taken whole anyway
        let cost = Self.cost(of: edit)
        guard editCount < Self.maxEdits, bytes + cost <= Self.maxBytes else {
            replaced(property)
            return
        }
        taken.edits[property, default: []].append(edit)
        editCount += 1
        bytes += cost
    }

    /// Records that `property` changed in a way the follower takes whole.
    mutating func replaced(_ property: String) {
        guard taken.replaced.insert(property).inserted else { return }
        if let dropped = taken.edits.removeValue(forKey: property) {
            editCount -= dropped.count
            bytes -= dropped.reduce(0) { $0 + Self.cost(of: $1) }
        }
    }

    /// What an edit costs in memory, for ``maxBytes``.
    private static func cost(of edit: ElementEdit) -> Int {
        switch edit {
        case .replaced(_, let element), .inserted(_, let element): 32 + element.approximateBytes
        case .removed, .moved: 32
        }
    }

    /// Records that every property in `names` changed in a way the follower takes whole.
    mutating func replaced(_ names: some Sequence<String>) {
        for name in names { replaced(name) }
    }

    /// Hands the follower what was recorded since the last take, and starts afresh.
    mutating func take() -> Taken {
        defer {
            taken = Taken()
            editCount = 0
            bytes = 0
        }
        return taken
    }
}
