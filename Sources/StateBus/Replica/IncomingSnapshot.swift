import StateBusWire

/// A snapshot being received part by part: the arrays the state takes once it is complete.
struct IncomingSnapshot {
    var values: [Value] = []
    var versions: [UInt64] = []
    var sequence: UInt64 = 0
    /// The part expected next.
    var nextPart = 0
    /// Properties filled so far (each once: ``fill(_:with:version:)`` refuses a second value).
    private(set) var filled = 0
    /// One bit per property, set once it has its value: a part that named one property twice
    /// and left another out would otherwise count as complete, the other left null.
    private var received: [UInt64] = []

    /// Starts receiving a snapshot of `count` properties at `sequence`.
    mutating func start(count: Int, sequence: UInt64) {
        values = Array(repeating: .null, count: count)
        versions = Array(repeating: 0, count: count)
        received = Array(repeating: 0, count: (count + 63) / 64)
        self.sequence = sequence
        nextPart = 0
        filled = 0
    }

    /// Takes one property's value. - Returns: `false` when the index is out of range or the
    /// property already has its value (the snapshot is not valid).
    mutating func fill(_ property: Int, with value: Value, version: UInt64) -> Bool {
        guard property >= 0, property < values.count else { return false }
        let bit: UInt64 = 1 << UInt64(property % 64)
        guard received[property / 64] & bit == 0 else { return false }
        received[property / 64] |= bit
        values[property] = value
        versions[property] = version
        filled += 1
        return true
    }

    /// Forgets what was received.
    mutating func reset() { self = IncomingSnapshot() }
}
