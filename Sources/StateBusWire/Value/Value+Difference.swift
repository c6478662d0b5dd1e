extension Value {
    /// Where `self` and `other` differ, as narrowly as possible: the path of the one part
    /// that changed and its new value, or `nil` when they are equal.
    ///
    /// When exactly one field of a map (or one element of a list of unchanged length)
    /// differs, the search goes into it; otherwise the difference is the whole value here.
    /// A binding to `user.email` changes one field, so its write becomes a path write.
    public func difference(to other: Value) -> (ValuePath, Value)? {
        if self == other { return nil }
        var path: [PathComponent] = []
        var old = self
        var new = other
        while true {
            switch (old, new) {
            case (.map(let before), .map(let after)) where before.count == after.count && Set(before.keys) == Set(after.keys):
                let changed = after.keys.filter { before[$0] != after[$0] }
                guard changed.count == 1, let key = changed.first else { return (ValuePath(path), new) }
                path.append(.key(key))
                old = before[key]!
                new = after[key]!
            case (.list(let before), .list(let after)) where before.count == after.count:
                let changed = after.indices.filter { before[$0] != after[$0] }
                guard changed.count == 1, let index = changed.first else { return (ValuePath(path), new) }
                path.append(.index(index))
                old = before[index]
                new = after[index]
            default:
                return (ValuePath(path), new)
            }
        }
    }
}
