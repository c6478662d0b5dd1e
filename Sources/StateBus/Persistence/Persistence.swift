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

    /// The database path for a host name, or `nil` when disabled or kept elsewhere.
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

/// Opens a store that is not a local file (``HostConfiguration/propertyStore``).
package struct PropertyStoreOpener: Sendable, Hashable {
    /// Where the values live, for messages; also what tells two openers apart.
    package let location: String
    private let open: @Sendable () throws(PersistenceError) -> any PropertyStore

    /// Creates an opener.
    package init(location: String, open: @escaping @Sendable () throws(PersistenceError) -> any PropertyStore) {
        self.location = location
        self.open = open
    }

    /// Opens the store.
    func callAsFunction() throws(PersistenceError) -> any PropertyStore { try open() }

    package static func == (lhs: PropertyStoreOpener, rhs: PropertyStoreOpener) -> Bool { lhs.location == rhs.location }
    package func hash(into hasher: inout Hasher) { hasher.combine(location) }
}
