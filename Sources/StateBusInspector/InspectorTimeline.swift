/// A history the inspector's page can scrub through: the recorded sequences of an object,
/// and a way to move the host the inspector watches to any of them (`statebus inspect
/// --recording FILE` serves a recording this way: time travel across processes).
///
/// The page shows a slider from ``first`` to ``last``; moving it calls ``seek``, after which
/// the inspector's replicas follow the host to that point as any view would.
public struct InspectorTimeline: Sendable {
    /// The recorded sequences, in order: the snapshot's first, then one per recorded batch.
    public var sequences: [UInt64]
    /// Moves the host to the state it had at a recorded sequence and returns the host's
    /// epoch and sequence then, so the inspector knows when its replicas have followed (a
    /// move back restarts the host: a new epoch).
    public var seek: @Sendable (UInt64) async throws -> (epoch: UInt64, sequence: UInt64)

    /// The first recorded sequence (the snapshot's).
    public var first: UInt64 { sequences.first ?? 0 }
    /// The last recorded sequence.
    public var last: UInt64 { sequences.last ?? 0 }

    /// - Parameters:
    ///   - sequences: the recorded sequences, ascending.
    ///   - seek: moves the host to a recorded sequence.
    public init(sequences: [UInt64], seek: @escaping @Sendable (UInt64) async throws -> (epoch: UInt64, sequence: UInt64)) {
        self.sequences = sequences
        self.seek = seek
    }
}
