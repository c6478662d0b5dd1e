import StateBusWire

/// Following one object of a host: the rules every follower applies, a view's replica and a
/// relay's copy alike (PROTOCOL.md sections 7 and 17), written once.
///
/// - It follows one host run, the epoch of the welcome: a run, a snapshot part or a
///   heartbeat of another epoch is a host that restarted, and calls for a new join.
/// - Until its snapshot is complete, runs wait, in order and bounded in bytes
///   (``JoinBuffer``); past the bound they are dropped and the snapshot is asked for again.
/// - The snapshot is taken part by part (``IncomingSnapshot``'s rule), then the runs that
///   waited apply on top of it.
/// - Batches apply in sequence order (``BatchPlace``): one already in the copy is skipped;
///   one after a hole is a gap, and the run that revealed it waits for the next snapshot.
/// - A change of a property the object does not have, or one that does not lead into its
///   value, makes the run malformed: the copy is taken again.
/// - A heartbeat that announces a sequence beyond the copy's says updates were lost: the
///   copy is taken again.
///
/// What the follower applies runs to is a ``FollowedCopy``; what it holds while it waits is
/// the caller's form of a run (a view keeps the bytes, a relay the decoded run).
struct ObjectFollower<HeldRun> {
    /// Where the follower stands.
    enum Stage: Equatable {
        /// No snapshot asked for yet (joining), or the last one is moot (a gap, a request
        /// the socket did not take): runs wait.
        case unsynced
        /// The snapshot asked for with this request id is on its way: runs wait.
        case awaitingSnapshot(requestID: UInt64)
        /// The copy holds the host's state and nothing was missed since: runs apply.
        case synced
    }

    /// What ``admit(epoch:size:holding:)`` decided of a run.
    enum Admission: Equatable {
        /// Apply it now (``apply(_:to:context:)``).
        case apply
        /// Kept until the snapshot is complete.
        case held
        /// The runs waiting passed their bound and were dropped: ask for a snapshot again.
        case overflowed
        /// Of another host run: join again.
        case otherEpoch
    }

    /// What taking a snapshot part did.
    enum PartOutcome {
        /// Not the snapshot the follower waits for (an old request's answer): ignore it.
        case notAwaited
        /// Of another host run: join again.
        case otherEpoch
        /// Not valid (why): ask for the snapshot again.
        case invalid(String)
        /// Taken; more parts are to come.
        case incomplete
        /// The last part: the copy takes the snapshot (``takeSnapshot()``), then applies
        /// `held` in order. The follower is synced.
        case complete(held: [HeldRun])
    }

    /// What applying a run did.
    struct RunOutcome: Equatable {
        /// Why applying stopped before the run's end.
        enum Stop: Equatable {
            /// A batch is missing before `next`; the copy is at `have`.
            case gap(have: UInt64, next: UInt64)
            /// The run is not valid for the copy (why).
            case malformed(String)
        }

        /// How many batches applied (0: the run was already in the copy).
        var applied = 0
        /// Why it stopped early; `nil` when the whole run was taken.
        var stop: Stop?
    }

    private(set) var stage = Stage.unsynced
    /// The host run followed: the epoch of the welcome.
    private(set) var epoch: UInt64 = 0
    private var incoming = IncomingSnapshot()
    private var held: JoinBuffer<HeldRun>
    /// Where a batch's changes are read, reused: no allocation per batch.
    private var scratch: [IndexedChange] = []

    /// - Parameter maxHeldBytes: how many bytes of runs may wait for a snapshot.
    init(maxHeldBytes: Int) {
        held = JoinBuffer(maxBytes: maxHeldBytes)
    }

    /// Whether the copy holds the host's state.
    var isSynced: Bool { stage == .synced }
    /// The request id of the snapshot on its way (0: none).
    var snapshotRequestID: UInt64 {
        if case .awaitingSnapshot(let id) = stage { return id }
        return 0
    }
    /// How many bytes of runs may wait for a snapshot.
    var maxHeldBytes: Int { held.maxBytes }

    /// Follows the host run `epoch` from the start (a welcome): nothing held, a snapshot due.
    mutating func start(epoch: UInt64) {
        self.epoch = epoch
        stage = .unsynced
        incoming.reset()
        held.reset()
    }

    /// A snapshot was asked for with `requestID` (0: the socket did not take the request,
    /// so it is to be asked again). Runs held so far keep waiting for it.
    mutating func awaitSnapshot(requestID: UInt64) {
        stage = requestID == 0 ? .unsynced : .awaitingSnapshot(requestID: requestID)
        incoming.reset()
    }

    /// The copy stopped following (a gap, a malformed run): a new snapshot is due, and
    /// `run` (the run that revealed a gap), when given, waits for it: its newer batches apply
    /// after the snapshot.
    mutating func lose(keeping run: HeldRun?, size: Int) {
        stage = .unsynced
        incoming.reset()
        held.reset(keeping: run, size: size)
    }

    /// Decides what to do with a run of host run `epoch`, of `size` encoded bytes.
    /// - Parameter run: the run as it is to be held (made only when it is).
    mutating func admit(epoch: UInt64, size: Int, holding run: () -> HeldRun) -> Admission {
        guard epoch == self.epoch else { return .otherEpoch }
        if stage == .synced { return .apply }
        return held.append(run(), size: size) ? .held : .overflowed
    }

    /// Takes one snapshot part answering `requestID`, for an object of `propertyCount`
    /// properties.
    mutating func take(_ part: inout SnapshotPartReader, requestID: UInt64, propertyCount: Int) -> PartOutcome {
        guard requestID != 0, requestID == snapshotRequestID else { return .notAwaited }
        // The epoch first: a restarted host may number its objects differently.
        guard part.epoch == epoch else { return .otherEpoch }
        switch incoming.take(&part, propertyCount: propertyCount) {
        case .invalid(let reason):
            incoming.reset()
            return .invalid(reason)
        case .incomplete:
            return .incomplete
        case .complete:
            stage = .synced
            return .complete(held: held.take())
        }
    }

    /// The snapshot the last part completed, moved out of the follower. Pass it straight to
    /// the copy (`copy.take(follower.takeSnapshot())`) and apply the held runs after that
    /// statement: its values are then referenced by the copy alone, and the first change
    /// after a join changes them in place. A second reference alive while the held runs
    /// apply would make the first of them copy every value and version of the object.
    mutating func takeSnapshot() -> IncomingSnapshot {
        defer { incoming.reset() }
        return incoming
    }

    /// Whether a heartbeat that announces `announced` for the object says the copy, at
    /// `have`, lost updates (a snapshot is then due).
    func lostUpdates(announced: UInt64, have: UInt64) -> Bool {
        stage == .synced && announced > have
    }

    /// Applies a run's batches in order to `copy`: the batches already in it are skipped;
    /// at a gap or a change that is not the object's it stops, what came before staying
    /// applied, and the caller calls ``lose(keeping:size:)``. Each batch is read whole
    /// before it is applied, so no half batch is ever in the copy.
    mutating func apply<Batches: RunBatches, Copy: FollowedCopy>(
        _ run: inout Batches, to copy: inout Copy, context: inout Copy.Context
    ) -> RunOutcome {
        var outcome = RunOutcome()
        do {
            if copy.keepsOnlyLatestValues { try run.leaveOutSupersededChanges() }
            while let batch = try run.nextBatch(into: &scratch) {
                switch BatchPlace(batch: batch.sequence, following: copy.sequence) {
                case .alreadyApplied: continue
                case .gap:
                    outcome.stop = .gap(have: copy.sequence, next: batch.sequence)
                    return outcome
                case .next: break
                }
                let count = copy.propertyCount
                guard scratch.allSatisfy({ $0.property < count }) else {
                    outcome.stop = .malformed("a change of property \(scratch.map(\.property).max() ?? 0); the object has \(count)")
                    return outcome
                }
                guard copy.apply(batch, scratch, context: &context) else {
                    outcome.stop = .malformed("a change in batch \(batch.sequence) that does not lead into its property's value")
                    return outcome
                }
                outcome.applied += 1
            }
        } catch {
            outcome.stop = .malformed("\(error)")
        }
        return outcome
    }
}
