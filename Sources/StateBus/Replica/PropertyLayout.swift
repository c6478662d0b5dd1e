import StateBusWire

/// An object's properties as a welcome describes them: names and kinds by index (the index
/// snapshots and runs of updates address them by).
///
/// The index of a name is found through a dictionary built on the first lookup by name, so
/// a view that only follows an object (or a benchmark that joins 100,000 properties) never
/// pays for one; objects of a few properties are searched instead.
struct PropertyLayout: Sendable, Equatable {
    /// The properties' names, by index.
    let names: [String]
    /// The properties' kinds, by index (`nil`: any value).
    let kinds: [ValueKind?]
    private var lookup: [String: Int]?

    init(names: [String], kinds: [ValueKind?]) {
        self.names = names
        self.kinds = kinds.count == names.count ? kinds : Array(repeating: nil, count: names.count)
    }

    /// The properties of a version-2 welcome's property table.
    init(table: Statebus_V1_PropertyTable) {
        self.init(names: table.names, kinds: table.kinds.map(ValueKind.init(wire:)))
    }

    /// How many properties the object has.
    var count: Int { names.count }

    /// The index of the property of that name.
    mutating func index(of name: String) -> Int? {
        if names.count <= 16 { return names.firstIndex(of: name) }
        if lookup == nil {
            var built: [String: Int] = [:]
            built.reserveCapacity(names.count)
            for (index, name) in names.enumerated() where built[name] == nil { built[name] = index }
            lookup = built
        }
        return lookup![name]
    }

    static func == (left: PropertyLayout, right: PropertyLayout) -> Bool {
        left.names == right.names && left.kinds == right.kinds
    }
}

/// Collects the indexes of properties that changed during one event (a publication, a
/// snapshot), each once, for observers that want their names: no hashing per change.
struct ChangeTracker: Sendable {
    private var marks: [UInt32] = []
    private var generation: UInt32 = 1
    /// The changed indexes, in the order first changed.
    private(set) var indexes: [Int] = []

    /// Notes that the property at `index` changed.
    @inline(__always)
    mutating func insert(_ index: Int) {
        if index >= marks.count { marks.append(contentsOf: repeatElement(0, count: index + 1 - marks.count)) }
        guard marks[index] != generation else { return }
        marks[index] = generation
        indexes.append(index)
    }

    /// Forgets the indexes collected, for the next event.
    mutating func reset() {
        indexes.removeAll(keepingCapacity: true)
        generation &+= 1
        if generation == 0 {
            generation = 1
            for index in marks.indices { marks[index] = 0 }
        }
    }
}
