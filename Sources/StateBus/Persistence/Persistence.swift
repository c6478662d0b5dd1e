import Foundation

/// Where a host keeps its persisted properties.
public enum Persistence: Sendable, Hashable {
    /// A file per host in the per-user state folder
    /// (`$XDG_STATE_HOME/statebus/<host name>.sqlite`, or `~/.local/state/statebus/…`),
    /// opened only when an object has persisted properties.
    case automatic
    /// This database file.
    case file(String)
    /// No persistence: persisted properties behave like the others. Only when asked for:
    /// a host never falls back to this silently.
    case disabled

    /// The database path for a host name, or `nil` when disabled.
    func path(hostName: String) -> String? {
        switch self {
        case .disabled: return nil
        case .file(let path): return path
        case .automatic:
            let environment = ProcessInfo.processInfo.environment
            let base =
                environment["XDG_STATE_HOME"].map { "\($0)/statebus" }
                ?? "\(environment["HOME"] ?? NSTemporaryDirectory())/.local/state/statebus"
            return "\(base)/\(hostName).sqlite"
        }
    }
}
