/// What a follower of a host receives while it joins (before its snapshot is complete), kept
/// in order and bounded in bytes: a view's raw publications (``ReplicaLimits/maxJoinBufferBytes``)
/// and a relay copy's decoded runs (``RelayConfiguration/maxBufferedUpdateBytes``) alike.
///
/// Past the bound it drops everything it holds: what was dropped may be newer than the
/// snapshot under way, so the join must start again from a new snapshot.
struct JoinBuffer<Element> {
    let maxBytes: Int
    private(set) var elements: [Element] = []
    /// Their encoded size.
    private(set) var bytes = 0

    init(maxBytes: Int) {
        self.maxBytes = maxBytes
    }

    /// Keeps one element, of `size` encoded bytes.
    /// - Returns: `false` when that passed the bound: the buffer is then empty, and the join
    ///   must start again from a new snapshot.
    mutating func append(_ element: Element, size: Int) -> Bool {
        bytes += size
        guard bytes <= maxBytes else {
            reset()
            return false
        }
        elements.append(element)
        return true
    }

    /// Empties the buffer, keeping `element` (of `size` bytes) when given.
    mutating func reset(keeping element: Element? = nil, size: Int = 0) {
        elements = element.map { [$0] } ?? []
        bytes = element == nil ? 0 : size
    }

    /// Takes every element and empties the buffer.
    mutating func take() -> [Element] {
        defer { reset() }
        return elements
    }
}
