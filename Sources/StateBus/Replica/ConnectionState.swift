/// Where a replica stands with its host.
public enum ConnectionState: Sendable, Hashable, CustomStringConvertible {
    /// Saying hello; no answer yet.
    case connecting
    /// The host answered; subscribing and loading the snapshot.
    case syncing
    /// In step with the host: every update is applied as it arrives.
    case live
    /// The host has gone quiet (no heartbeat for several intervals) or restarted; the
    /// replica keeps its last state and is reconnecting.
    case stale
    /// Closed for good.
    case closed

    /// The state's name.
    public var description: String {
        switch self {
        case .connecting: "connecting"
        case .syncing: "syncing"
        case .live: "live"
        case .stale: "stale"
        case .closed: "closed"
        }
    }
}

/// The replica's ``Replica/connectionState`` after it changed (or after a new
/// ``Replica/lastError``).
public typealias ConnectionStateChanges = StateChanges<ConnectionState>
