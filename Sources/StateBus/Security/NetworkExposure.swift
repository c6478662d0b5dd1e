/// Whether an endpoint a host or relay binds can be reached by anyone but this user: the
/// secure-by-default rule. A host refuses to bind such an endpoint without CURVE keys unless
/// told ``HostConfiguration/allowsInsecureNetwork`` (`--insecure`).
///
/// Loopback tcp counts as exposed: every user of the machine, and every container sharing
/// its network namespace, can connect to a port on 127.0.0.1. Only `ipc://` (a socket file
/// in the user's private 0700 runtime folder, itself 0600) and `inproc://` are this user's
/// alone.
enum NetworkExposure {
    /// `true` for `ipc://` and `inproc://`; `false` for every `tcp://` endpoint, loopback
    /// included, and every other transport.
    static func isLocal(_ endpoint: String) -> Bool {
        endpoint.hasPrefix("ipc://") || endpoint.hasPrefix("inproc://")
    }
}
