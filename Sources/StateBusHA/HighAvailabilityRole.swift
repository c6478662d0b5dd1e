/// What a host of a high-availability group does now.
public enum HighAvailabilityRole: Sendable, Equatable, CustomStringConvertible {
    /// It waits for etcd's first answer.
    case starting
    /// Another host leads (its control endpoint, when known); this one follows it and refuses
    /// views with `NOT_LEADER`.
    case standby(leader: String?)
    /// It leads: it serves views and takes writes. `epoch` is its welcome's epoch, `term` the
    /// etcd revision that created its leader key (larger for every later term).
    case leader(epoch: UInt64, term: Int64)
    /// It stopped.
    case stopped

    /// "leader epoch=… term=…", "standby leader=…", "starting" or "stopped".
    public var description: String {
        switch self {
        case .starting: "starting"
        case .standby(let leader): "standby leader=\(leader ?? "unknown")"
        case .leader(let epoch, let term): "leader epoch=\(epoch) term=\(term)"
        case .stopped: "stopped"
        }
    }
}
