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

    /// What taking one snapshot part did.
    enum PartOutcome: Equatable {
        /// Taken; more parts are to come.
        case incomplete
        /// Taken, and it was the last: ``values``, ``versions`` and ``sequence`` hold the
        /// whole snapshot.
        case complete
        /// Not valid (why): the snapshot must be asked for again.
        case invalid(String)
    }

    /// Takes one part of a version-2 snapshot (PROTOCOL.md section 17.5), the rule every
    /// follower of a host applies, a view and a relay alike: parts come in order, part 0
    /// starts the snapshot at its sequence and every later part has the same sequence; each
    /// property is given exactly once, and the last part completes a snapshot only when
    /// every property had its value. The part's epoch is the caller's to check first.
    /// - Parameters:
    ///   - part: the part, read from its start.
    ///   - propertyCount: how many properties the object has.
    mutating func take(_ part: inout SnapshotPartReader, propertyCount: Int) -> PartOutcome {
        guard part.part == nextPart, part.part == 0 || part.sequence == sequence else {
            return .invalid("part \(part.part) at sequence \(part.sequence) came when part \(nextPart) at \(sequence) was due")
        }
        if part.part == 0 { start(count: propertyCount, sequence: part.sequence) }
        nextPart += 1
        do {
            while !part.isAtEnd {
                let (change, version) = try part.next()
                guard fill(change.property, with: change.value, version: version) else {
                    return .invalid("property \(change.property) of \(values.count), or given twice")
                }
            }
        } catch {
            return .invalid("\(error)")
        }
        guard part.last else { return .incomplete }
        guard filled == propertyCount else {
            return .invalid("a snapshot held \(filled) values for \(propertyCount) properties")
        }
        return .complete
    }
}
