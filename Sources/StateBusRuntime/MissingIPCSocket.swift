import Foundation

/// Tells an `ipc://` endpoint that nothing can be listening at, because its socket file is not
/// there: a client that hears nothing from such an endpoint says so, instead of guessing at a
/// host that is running but silent.
public enum MissingIPCSocket {
    /// The socket's path when `endpoint` is an `ipc://` endpoint with no file at that path;
    /// `nil` for any other endpoint (`tcp://`, an abstract socket `ipc://@…`) and for a path that
    /// exists.
    public static func path(of endpoint: String) -> String? {
        guard endpoint.hasPrefix("ipc://") else { return nil }
        let path = String(endpoint.dropFirst("ipc://".count))
        guard !path.isEmpty, !path.hasPrefix("@") else { return nil }
        var status = stat()
        guard lstat(path, &status) != 0, errno == ENOENT else { return nil }
        return path
    }
}
