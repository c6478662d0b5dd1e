import StateBus
import StateBusWire

/// What the replica side's stand-in host holds true: the objects it serves (their order
/// gives the welcome's indexes), its epoch, and `Target`'s sequence and values by property
/// index. Whatever garbage a replica took, it must converge on this after it resynchronises.
struct StandInTruth {
    var epoch: UInt64
    var sequence: UInt64 = 0
    /// `Target`'s values, by property index (`FuzzObjects.target`'s order).
    private(set) var values: [Value]
    /// The sequence at which each property last changed (0: never), by index.
    private(set) var versions: [UInt64]
    /// The served objects, in the welcome's order: a restarted host may list them in
    /// another, which moves `Target`'s index and changes the schema hash.
    private(set) var objects: [ObjectDefinition] = FuzzObjects.all
    private(set) var targetIndex = 0
    private(set) var schemaHash = FuzzObjects.schemaHash(of: FuzzObjects.all)

    /// `Target`'s property names and kinds, by index.
    static let names = FuzzObjects.target.properties.map(\.name)
    static let kinds = FuzzObjects.target.properties.map(\.kind)

    init(epoch: UInt64) {
        self.epoch = epoch
        let defaults = FuzzObjects.target.defaultValues
        values = Self.names.map { defaults[$0] ?? .null }
        versions = Array(repeating: 0, count: values.count)
    }

    /// `Target`'s values by name, as a replica shows them.
    var byName: [String: Value] {
        Dictionary(uniqueKeysWithValues: zip(Self.names, values))
    }

    /// A host restart: a new epoch, the objects perhaps in another order (values and
    /// sequence survive, as a persisted host's do).
    mutating func restart(epoch: UInt64, reordered: Bool) {
        self.epoch = epoch
        objects = reordered ? FuzzObjects.all.reversed() : FuzzObjects.all
        targetIndex = objects.firstIndex { $0.name == FuzzObjects.target.name }!
        schemaHash = FuzzObjects.schemaHash(of: objects)
    }

    /// Applies one change of the batch at `sequence` as a replica does: a whole value
    /// replaces, a change inside a value that does not apply leaves it as it was (its
    /// version moves on all the same).
    /// - Returns: `false` when the property does not exist (the change is not applied).
    @discardableResult
    mutating func apply(_ change: IndexedChange, at sequence: UInt64) -> Bool {
        guard values.indices.contains(change.property) else { return false }
        versions[change.property] = sequence
        if change.replacesWholeValue {
            values[change.property] = change.value
        } else if let updated = try? values[change.property].applying(change.operation, change.value, at: change.path, position: change.position) {
            values[change.property] = updated
        }
        return true
    }
}
