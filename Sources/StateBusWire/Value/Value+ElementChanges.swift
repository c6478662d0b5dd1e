/// One element operation of a keyed collection, as ``Value/elementChanges(to:)`` finds it.
public struct ElementChange: Sendable, Hashable {
    /// What to do.
    public var operation: ElementOperation
    /// Where, from the collection (the property's value) down.
    public var path: ValuePath
    /// The new part (replace) or the inserted element (insert); `.null` otherwise.
    public var value: Value
    /// Where an inserted or moved element goes.
    public var position: Int

    /// Creates an element operation.
    public init(operation: ElementOperation, path: ValuePath, value: Value, position: Int) {
        self.operation = operation
        self.path = path
        self.value = value
        self.position = position
    }
}

extension Value {
    /// The element operations that turn this keyed collection into `other`: removals,
    /// moves, insertions and in-place edits of elements, each addressed by id, so that other
    /// writers' edits of other elements survive. `nil` when either value is not a keyed
    /// collection (a list of maps with unique `"id"` fields), or when replacing the whole
    /// list is simpler (most of it changed).
    public func elementChanges(to other: Value) -> [ElementChange]? {
        guard case .list(let before) = self, case .list(let after) = other,
            let beforeIDs = Self.uniqueIDs(of: before), let afterIDs = Self.uniqueIDs(of: after)
        else { return nil }
        let afterSet = Set(afterIDs)
        let beforeSet = Set(beforeIDs)
        var changes: [ElementChange] = []

        // Removals, by id.
        for id in beforeIDs where !afterSet.contains(id) {
            changes.append(ElementChange(operation: .remove, path: [.id(id)], value: .null, position: 0))
        }
        // Moves: the survivors in their new order. Those on a longest increasing run of old
        // positions stay; each other one moves to its place, in the new order.
        let survivors = beforeIDs.filter(afterSet.contains)
        let target = afterIDs.filter(beforeSet.contains)
        if survivors != target {
            let oldPosition = Dictionary(uniqueKeysWithValues: survivors.enumerated().map { ($1, $0) })
            let staying = Set(Self.longestIncreasingRun(target.map { oldPosition[$0]! }).map { target[$0] })
            // Each one goes right after the element before it in the new order, which is
            // already in place: so every element before it keeps the new order.
            var current = survivors
            for (index, id) in target.enumerated() where !staying.contains(id) {
                current.remove(at: current.firstIndex(of: id)!)
                let position = index == 0 ? 0 : current.firstIndex(of: target[index - 1])! + 1
                current.insert(id, at: position)
                changes.append(ElementChange(operation: .move, path: [.id(id)], value: .null, position: position))
            }
        }
        // Insertions, in the new order, at their final positions.
        for (index, id) in afterIDs.enumerated() where !beforeSet.contains(id) {
            changes.append(ElementChange(operation: .insert, path: .root, value: after[index], position: index))
        }
        // Edits of elements that stayed: the narrowest part that changed.
        let beforeByID = Dictionary(uniqueKeysWithValues: zip(beforeIDs, before))
        for (index, id) in afterIDs.enumerated() {
            guard let old = beforeByID[id], let (path, part) = old.difference(to: after[index]) else { continue }
            changes.append(ElementChange(operation: .replace, path: ValuePath([.id(id)] + path.components), value: part, position: 0))
        }
        // More operations than elements is no saving; and the result must be exact.
        guard changes.count <= Swift.max(1, after.count / 2) || changes.count == 1 else { return nil }
        var check = self
        for change in changes {
            guard let next = try? check.applying(change.operation, change.value, at: change.path, position: change.position) else { return nil }
            check = next
        }
        return check == other ? changes : nil
    }

    /// The `"id"` of every element, when every element is a map with one and none repeats.
    static func uniqueIDs(of items: [Value]) -> [Value]? {
        var ids: [Value] = []
        ids.reserveCapacity(items.count)
        var seen = Set<Value>()
        for item in items {
            guard let id = item.elementID, seen.insert(id).inserted else { return nil }
            ids.append(id)
        }
        return ids
    }

    /// The positions (in `sequence`) of a longest strictly increasing subsequence.
    static func longestIncreasingRun(_ sequence: [Int]) -> [Int] {
        var tails: [Int] = []  // tails[k]: index of the smallest last value of a run of length k + 1
        var previous = [Int](repeating: -1, count: sequence.count)
        for (index, value) in sequence.enumerated() {
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if sequence[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var run: [Int] = []
        var current = tails.last ?? -1
        while current >= 0 {
            run.append(current)
            current = previous[current]
        }
        return run.reversed()
    }
}
