extension Value {
    /// An upper bound of this value's size in the wire encoding (`statebus.v1.Value`), in
    /// bytes: the payload plus a tag and a length prefix for every element.
    ///
    /// Computed by walking the value, without encoding it: a host checks every write against
    /// its size bounds, and encoding a large value only to measure it would double the cost.
    /// Overestimates by a few bytes per element, never underestimates, so a value that fits
    /// by this measure fits on the wire.
    public var encodedSizeBound: Int {
        // Per element: the oneof tag (1 to 2 bytes), a length varint (up to 5 bytes for any
        // length below 4 GiB) and the enclosing message's tag and length.
        let framing = 12
        switch self {
        case .null, .bool: return framing
        case .int, .double: return framing + 10
        case .string(let text): return framing + text.utf8.count
        case .bytes(let data): return framing + data.count
        case .list(let items): return items.reduce(framing) { $0 + $1.encodedSizeBound }
        case .map(let entries): return entries.reduce(framing) { $0 + framing + $1.key.utf8.count + $1.value.encodedSizeBound }
        }
    }
}
