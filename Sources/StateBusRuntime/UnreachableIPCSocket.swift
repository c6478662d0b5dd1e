import Foundation

/// Tells an `ipc://` endpoint that nothing can be listening at, from its path alone: a client
/// that hears nothing from such an endpoint says why, instead of guessing at a host that is
/// running but silent.
public enum UnreachableIPCSocket {
    /// Why nothing can listen at `endpoint` ("its socket file does not exist", "its path is not
    /// a socket"); `nil` for any other endpoint (`tcp://`, an abstract socket `ipc://@…`) and
    /// for a path that holds a socket (one left by a host that died is not told apart: only
    /// connecting would tell).
    public static func problem(of endpoint: String) -> String? {
        guard endpoint.hasPrefix("ipc://") else { return nil }
        let path = String(endpoint.dropFirst("ipc://".count))
        guard !path.isEmpty, !path.hasPrefix("@") else { return nil }
        var status = stat()
        // Followed as libzmq's connect follows it: a link to nothing is a missing socket.
        guard stat(path, &status) == 0 else {
            let failure = errno
            return failure == ENOENT || failure == ENOTDIR ? "its socket file does not exist" : nil
        }
        return status.st_mode & S_IFMT == S_IFSOCK ? nil : "its path is not a socket"
    }
}
