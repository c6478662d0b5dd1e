extension Value {
    /// The deepest a property's value may nest, in protobuf messages counted from its own
    /// `Value` message.
    ///
    /// Every message that carries a property's value holds it at most four messages deep (a
    /// write's or a version-1 publication's `Change`, a snapshot chunk's `PropertyState`), so
    /// a value this deep ends 59 messages deep, inside what every decoder of the protocol
    /// reads (``ValueCodec/decodingDepthLimit``, less the few messages a carrier adds). A host
    /// refuses a write that would store a deeper value: a path write can build one from two
    /// shallow halves, and a value no view can decode would keep every view resynchronising.
    package static let maximumNestingDepth = 56

    /// Whether this value's encoding nests more than `limit` messages deep, counting its own
    /// `Value` message: a scalar is 1, a list level adds 2 (`ListValue` and the item's
    /// `Value`), a map level 3 (`MapValue`, the entry and its `Value`).
    ///
    /// Walks at most `limit` levels down, so an arbitrarily deep value built in Swift cannot
    /// exhaust the stack here.
    package func nests(deeperThan limit: Int) -> Bool {
        switch self {
        case .null, .bool, .int, .double, .string, .bytes:
            return limit < 1
        case .list(let items):
            if limit < 2 { return true }
            return items.contains { $0.nests(deeperThan: limit - 2) }
        case .map(let entries):
            if limit < 2 { return true }
            return entries.values.contains { $0.nests(deeperThan: limit - 3) }
        }
    }
}
