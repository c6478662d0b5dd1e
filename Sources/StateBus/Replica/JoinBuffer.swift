import StateBusWire

/// The update batches a replica receives while it joins (before its snapshot is applied),
/// bounded in bytes (``ReplicaLimits/maxJoinBufferBytes``).
struct JoinBuffer {
    let maxBytes: Int
    private(set) var batches: [Statebus_V1_UpdateBatch] = []
    /// The encoded size of the publications the batches came in.
    private(set) var bytes = 0

    init(maxBytes: Int) {
        self.maxBytes = maxBytes
    }

    /// Keeps the batches of one publication of `bytes` encoded bytes.
    /// - Returns: `false` when that passed the bound: the buffer is then empty, and the
    ///   join must start again from a new snapshot (what was dropped may be newer than the
    ///   snapshot under way).
    mutating func append(_ newBatches: [Statebus_V1_UpdateBatch], bytes publicationBytes: Int) -> Bool {
        bytes += publicationBytes
        guard bytes <= maxBytes else {
            reset()
            return false
        }
        batches.append(contentsOf: newBatches)
        return true
    }

    /// Empties the buffer, keeping `batch` when given.
    mutating func reset(keeping batch: Statebus_V1_UpdateBatch? = nil) {
        batches = batch.map { [$0] } ?? []
        bytes = 0
    }

    /// Takes every batch and empties the buffer.
    mutating func take() -> [Statebus_V1_UpdateBatch] {
        defer { reset() }
        return batches
    }
}
