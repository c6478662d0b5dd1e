import StateBusWire

extension PropertyChange {
    /// Roughly what the change costs in memory while it waits for the host: its value's
    /// payload plus a fixed overhead per change and per nested value. An estimate for the
    /// replica's write-queue bound in bytes (``ReplicaConfiguration/maxQueuedWriteBytes``),
    /// cheap enough for every write: no encoding.
    var approximateBytes: Int {
        64 + property.utf8.count + 16 * path.components.count + value.approximateBytes
    }
}

extension Value {
    /// Roughly what the value occupies: payload bytes plus 16 per value.
    var approximateBytes: Int {
        switch self {
        case .null, .bool, .int, .double: 16
        case .string(let text): 16 + text.utf8.count
        case .bytes(let data): 16 + data.count
        case .list(let items): items.reduce(16) { $0 + $1.approximateBytes }
        case .map(let entries): entries.reduce(16) { $0 + 16 + $1.key.utf8.count + $1.value.approximateBytes }
        }
    }
}
