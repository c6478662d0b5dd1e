import Foundation

/// The per-user folder for default ipc endpoints: `$XDG_RUNTIME_DIR/statebus`, or
/// `/tmp/statebus-<uid>` when there is no runtime directory.
public enum RuntimeFolder {
    /// The folder's path; created on first use.
    public static var path: String {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_RUNTIME_DIR"].map { "\($0)/statebus" } ?? "/tmp/statebus-\(getuid())"
        try? FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return base
    }
}
