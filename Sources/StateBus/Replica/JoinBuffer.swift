/// The publications a replica receives while it joins (before its snapshot is applied), kept
/// as received and bounded in bytes (``ReplicaLimits/maxJoinBufferBytes``).
struct JoinBuffer {
    let maxBytes: Int
    private(set) var publications: [[UInt8]] = []
    /// Their encoded size.
    private(set) var bytes = 0

    init(maxBytes: Int) {
        self.maxBytes = maxBytes
    }

    /// Keeps one publication.
    /// - Returns: `false` when that passed the bound: the buffer is then empty, and the
    ///   join must start again from a new snapshot (what was dropped may be newer than the
    ///   snapshot under way).
    mutating func append(_ publication: [UInt8]) -> Bool {
        bytes += publication.count
        guard bytes <= maxBytes else {
            reset()
            return false
        }
        publications.append(publication)
        return true
    }

    /// Empties the buffer, keeping `publication` when given.
    mutating func reset(keeping publication: [UInt8]? = nil) {
        publications = publication.map { [$0] } ?? []
        bytes = publication?.count ?? 0
    }

    /// Takes every publication and empties the buffer.
    mutating func take() -> [[UInt8]] {
        defer { reset() }
        return publications
    }
}
