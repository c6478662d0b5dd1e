import StateBusWire

/// A relay's copy of one object: what its upstream's snapshot and runs give, followed by the
/// rules every follower of a host applies (``ObjectFollower``), and what the relay serves
/// as a snapshot (in either version). While a snapshot is on its way, runs wait in the
/// follower's bounded buffer.
struct ObjectCopy {
    /// What taking an upstream run or snapshot part did.
    enum Outcome: Equatable {
        /// Applied, held for the snapshot on its way, or already in the copy.
        case taken
        /// The copy needs a new snapshot (a gap, a part or run that is not valid, the held
        /// runs past their bound).
        case needsSnapshot
        /// Of another upstream run: the relay must join its upstream again.
        case otherEpoch
    }

    let name: String
    /// The object's index in the upstream's welcome.
    let index: Int
    let layout: PropertyLayout
    private var follower: ObjectFollower<DecodedRun>
    private(set) var copied = CopiedValues()
    /// When the snapshot on its way was asked for, or its latest part came: its deadline
    /// counts from then (a large one over a slow link takes longer than one request
    /// timeout, and asking again would start it over every time). `nil` when none is due.
    private(set) var snapshotAskedAt: ContinuousClock.Instant?

    /// - Parameters:
    ///   - epoch: the upstream run the relay joined (its welcome's epoch).
    ///   - maxBufferedBytes: how many bytes of runs wait for a snapshot on its way; past it
    ///     they are dropped and the snapshot asked for again.
    init(name: String, index: Int, layout: PropertyLayout, epoch: UInt64, maxBufferedBytes: Int) {
        self.name = name
        self.index = index
        self.layout = layout
        follower = ObjectFollower(maxHeldBytes: maxBufferedBytes)
        follower.start(epoch: epoch)
    }

    var epoch: UInt64 { follower.epoch }
    var sequence: UInt64 { copied.sequence }
    var values: [Value] { copied.values }
    var versions: [UInt64] { copied.versions }
    /// Whether the copy holds the upstream's state: a snapshot arrived and nothing was
    /// missed since.
    var isSynced: Bool { follower.isSynced }
    /// The request id of the snapshot on its way (0: none).
    var snapshotRequestID: UInt64 { follower.snapshotRequestID }

    /// Forgets that the copy is in step: a snapshot is needed.
    mutating func invalidate() {
        follower.lose(keeping: nil, size: 0)
        snapshotAskedAt = nil
    }

    /// A snapshot was asked for with `requestID` at `now`; runs wait until it is complete.
    mutating func awaitSnapshot(requestID: UInt64, at now: ContinuousClock.Instant) {
        follower.awaitSnapshot(requestID: requestID)
        snapshotAskedAt = now
    }

    /// A part of the snapshot on its way came, and more are to come.
    mutating func partArrived(at now: ContinuousClock.Instant) { snapshotAskedAt = now }

    /// Whether a heartbeat announcing `sequence` for the object says the copy lost updates.
    func lostUpdates(announced sequence: UInt64) -> Bool { follower.lostUpdates(announced: sequence, have: copied.sequence) }

    /// Takes one snapshot part answering `requestID`.
    /// - Returns: whether the copy is synced now, or what else the relay must do.
    mutating func receive(_ part: inout SnapshotPartReader, requestID: UInt64) -> (synced: Bool, outcome: Outcome) {
        switch follower.take(&part, requestID: requestID, propertyCount: layout.count) {
        case .notAwaited, .incomplete: return (false, .taken)
        case .otherEpoch: return (false, .otherEpoch)
        case .invalid: return (false, .needsSnapshot)
        case .complete(let held):
            copied.take(follower.takeSnapshot())
            snapshotAskedAt = nil
            // What arrived meanwhile: newer batches apply in order; a hole means another
            // snapshot.
            for run in held {
                let outcome = apply(run)
                guard outcome == .taken else { return (false, outcome) }
            }
            return (true, .taken)
        }
    }

    /// Applies one upstream run (or holds it while a snapshot is on its way).
    /// - Parameter bytes: the run's encoded size, for the buffer's bound.
    mutating func apply(_ run: DecodedRun, bytes: Int = 0) -> Outcome {
        switch follower.admit(epoch: run.epoch, size: bytes, holding: { run }) {
        case .held: return .taken
        case .overflowed: return .needsSnapshot
        case .otherEpoch: return .otherEpoch
        case .apply: break
        }
        var batches = DecodedRun.Batches(run)
        var context = CopiedValues.Context()
        switch follower.apply(&batches, to: &copied, context: &context).stop {
        case nil: return .taken
        case .gap?:
            // Its newer batches apply after the snapshot.
            follower.lose(keeping: run, size: bytes)
            return .needsSnapshot
        case .malformed?:
            follower.lose(keeping: nil, size: 0)
            return .needsSnapshot
        }
    }
}
