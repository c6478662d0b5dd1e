extension LeaderElection {
    /// One term of leadership won by this candidate.
    public struct Leadership: Sendable, Equatable, Hashable {
        /// The leader key's create revision: the term's epoch and fencing token. It is
        /// cluster-wide and strictly increasing, so every later term, also of this same
        /// candidate, has a larger one.
        public var createRevision: Int64
        /// The lease the leader key is attached to.
        public var leaseID: Int64

        /// Creates a leadership value.
        public init(createRevision: Int64, leaseID: Int64) {
            self.createRevision = createRevision
            self.leaseID = leaseID
        }
    }

    /// A change of this candidate's role, as ``LeaderElection/events()`` reports it.
    public enum Event: Sendable, Equatable, Hashable {
        /// This candidate became the leader. It stays leader while
        /// ``LeaderElection/isLeader(at:)`` says so, and until ``steppedDown(reason:)``.
        case leading(Leadership)
        /// Another candidate leads: `leader` is the record it stored (nil when unknown) and
        /// `revision` its term's create revision (0 when unknown). Reported again when the
        /// leader changes.
        case following(leader: [UInt8]?, revision: Int64)
        /// This candidate was leader and is no more: its lease is gone, could not be renewed
        /// in time, or its leader key was deleted or taken, or it resigned.
        case steppedDown(reason: String)
    }
}
