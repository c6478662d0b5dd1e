import Foundation

/// A fresh folder for ipc endpoints and databases, removed by ``remove()``.
struct ScratchFolder {
    /// The folder's absolute path.
    let path: String

    /// Creates a folder unique to this process and call in the temporary directory.
    /// - Throws: when the folder cannot be created.
    init() throws {
        path = NSTemporaryDirectory() + "statebus-bench-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// An `ipc://` endpoint in the folder.
    func endpoint(_ name: String) -> String { "ipc://\(path)/\(name)" }

    /// A file's path in the folder.
    func path(_ name: String) -> String { "\(path)/\(name)" }

    /// Deletes the folder and everything in it; errors are ignored (a leftover folder in
    /// the temporary directory harms nothing).
    func remove() { try? FileManager.default.removeItem(atPath: path) }
}
