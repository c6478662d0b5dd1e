/// Where a published batch stands for a follower of a host (a view, or a relay's upstream
/// side) whose copy of the object is at some sequence: the rule of PROTOCOL.md sections 7
/// and 17.6, written once for every follower.
enum BatchPlace: Equatable {
    /// At or below the copy's sequence: already in it (from the snapshot, or applied before).
    case alreadyApplied
    /// The batch right after the copy's sequence: apply it.
    case next
    /// A batch is missing before it: the copy needs a new snapshot.
    case gap

    /// Places the batch numbered `batch` for a copy at `current`.
    init(batch: UInt64, following current: UInt64) {
        self = batch <= current ? .alreadyApplied : batch == current + 1 ? .next : .gap
    }
}
