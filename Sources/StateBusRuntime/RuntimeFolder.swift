import Foundation

/// The per-user folder for default ipc endpoints: `$XDG_RUNTIME_DIR/statebus`, or
/// `/tmp/statebus-<uid>` when there is no runtime directory.
///
/// Its sockets are the way into every host of the user, so it must be private: a folder of
/// the user's own, mode 0700, not a symbolic link. ``prepare()`` creates it that way and
/// refuses one that is not (another local user could have made `/tmp/statebus-<uid>` first,
/// to put a socket of their own in the victim's path).
public enum RuntimeFolder {
    /// The folder's path. Neither creates nor checks it: call ``prepare()`` before using it.
    public static var path: String {
        let environment = ProcessInfo.processInfo.environment
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return "\(runtime)/statebus" }
        return "/tmp/statebus-\(getuid())"
    }

    /// Creates the folder (mode 0700) when it is missing, then checks that it is private.
    /// - Returns: its path.
    /// - Throws: ``RuntimeFolderError`` naming the path, what is wrong and what to do.
    @discardableResult
    public static func prepare() throws(RuntimeFolderError) -> String {
        let path = self.path
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw RuntimeFolderError(
                path: path, problem: "cannot be created (\(String(cString: strerror(errno))))",
                remedy: "set XDG_RUNTIME_DIR to a folder you can write")
        }
        try checkPrivate(path)
        return path
    }

    /// Checks that an ipc endpoint in the runtime folder is safe to connect to or bind:
    /// the folder is private. Other endpoints pass unchecked.
    /// - Throws: ``RuntimeFolderError`` when the endpoint is in a runtime folder that is not private.
    public static func checkEndpoint(_ endpoint: String) throws(RuntimeFolderError) {
        guard endpoint.hasPrefix("ipc://") else { return }
        let socketPath = String(endpoint.dropFirst("ipc://".count))
        let folder = path
        guard socketPath.hasPrefix(folder + "/") else { return }
        var status = stat()
        if lstat(folder, &status) != 0 && errno == ENOENT { return }  // nothing there yet: binding prepares it
        try checkPrivate(folder)
    }

    private static func checkPrivate(_ path: String) throws(RuntimeFolderError) {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            throw RuntimeFolderError(
                path: path, problem: "cannot be read (\(String(cString: strerror(errno))))",
                remedy: "check the permissions of its parent folder")
        }
        let type = status.st_mode & S_IFMT
        guard type != S_IFLNK else {
            throw RuntimeFolderError(path: path, problem: "is a symbolic link", remedy: "remove it (rm \(path)) and start again")
        }
        guard type == S_IFDIR else {
            throw RuntimeFolderError(path: path, problem: "is not a folder", remedy: "remove it and start again")
        }
        guard status.st_uid == getuid() else {
            throw RuntimeFolderError(
                path: path, problem: "belongs to user \(status.st_uid), not to you (user \(getuid()))",
                remedy: "someone else made it: do not use it; remove it as its owner or root, or set XDG_RUNTIME_DIR to a private folder")
        }
        let mode = status.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw RuntimeFolderError(
                path: path, problem: "has mode \(String(mode, radix: 8)), so other users can reach its sockets",
                remedy: "make it private (chmod 700 \(path)) and restart")
        }
    }
}

/// The runtime folder is not safe to use.
public struct RuntimeFolderError: Error, Sendable, CustomStringConvertible {
    /// The folder.
    public let path: String
    /// What is wrong with it.
    public let problem: String
    /// What to do.
    public let remedy: String

    /// What is wrong and what to do.
    public var description: String {
        "the runtime folder \(path) \(problem); StateBus keeps its sockets there and needs it to be yours alone (mode 0700): \(remedy)"
    }
}
