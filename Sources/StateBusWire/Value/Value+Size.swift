extension Value {
    /// An upper bound of this value's size in the wire encoding (`statebus.v1.Value`), in
    /// bytes: the payload plus a tag and a length prefix for every element.
    ///
    /// Computed by walking the value, without encoding it: a host checks every write against
    /// its size bounds, and encoding a large value only to measure it would double the cost.
    /// Overestimates by a few bytes per element, never underestimates, so a value that fits
    /// by this measure fits on the wire.
    public var encodedSizeBound: Int {
        // Every value nests fewer than Int.max messages deep: the walk always finds a size.
        encodedSizeBound(nestingAtMost: .max) ?? 0
    }
}

extension Value {
    /// ``encodedSizeBound``, found in the same walk that checks how deep the value nests:
    /// `nil` when it nests more than `limit` messages deep (as ``nests(deeperThan:)`` says),
    /// for a write that needs both without walking a large value twice.
    package func encodedSizeBound(nestingAtMost limit: Int) -> Int? {
        guard limit >= 1 else { return nil }
        // Per element: the oneof tag (1 to 2 bytes), a length varint (up to 5 bytes for any
        // length below 4 GiB) and the enclosing message's tag and length.
        let framing = 12
        switch self {
        case .null, .bool: return framing
        case .int, .double: return framing + 10
        case .string(let text): return framing + text.utf8.count
        case .bytes(let data): return framing + data.count
        case .list(let items):
            guard limit >= 2 else { return nil }
            var total = framing
            for item in items {
                guard let size = item.encodedSizeBound(nestingAtMost: limit - 2) else { return nil }
                total += size
            }
            return total
        case .map(let entries):
            guard limit >= 2 else { return nil }
            var total = framing
            for (key, item) in entries {
                guard let size = item.encodedSizeBound(nestingAtMost: limit - 3) else { return nil }
                total += framing + key.utf8.count + size
            }
            return total
        }
    }
}

extension ValuePath {
    /// An upper bound of this path's size as the repeated `PathComponent` field of a
    /// `Change` or `PathedChange`: per step, the field's tag and length (6 bytes), the step's
    /// own tag and length (6), and its key's bytes, its index (10) or its id's value.
    package var encodedSizeBound: Int {
        var total = 0
        for step in components {
            switch step {
            case .key(let key): total += 12 + key.utf8.count
            case .index: total += 12 + 10
            case .id(let id): total += 12 + id.encodedSizeBound
            }
        }
        return total
    }
}
