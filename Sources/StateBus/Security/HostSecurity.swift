import ZeroMQ

/// A host's CURVE identity and whom it admits: set ``HostConfiguration/security`` to
/// encrypt both of the host's sockets and authenticate every client.
///
/// With it, the host's control (ROUTER) and updates (XPUB) sockets are CURVE servers and a
/// ZAP handler on the host's I/O loop admits only the keys in ``authorizedKeysFile``, each
/// with its role (see ``AuthorizedKeys``). The host re-reads the file on
/// ``StateHost/reloadAuthorizedKeys()`` (`statebus host` does on SIGHUP).
public struct HostSecurity: Sendable {
    /// The host's own key pair (its public key is what views pass as `--host-key`).
    public var keys: CurveKeyPair
    /// The authorized keys file: read at start (a malformed one stops the start) and at
    /// every reload.
    public var authorizedKeysFile: String

    /// Creates the settings.
    /// - Parameters:
    ///   - keys: the host's key pair (``CurveKeyFile/loadSecret(at:)``).
    ///   - authorizedKeysFile: the path of the authorized keys file.
    public init(keys: CurveKeyPair, authorizedKeysFile: String) {
        self.keys = keys
        self.authorizedKeysFile = authorizedKeysFile
    }

    /// Loads both from files, as `statebus host --key host.key --authorized authorized.keys`.
    /// - Throws: ``KeyFileError`` or ``AuthorizedKeysError`` with the file and what is wrong.
    public init(keyFile: String, authorizedKeysFile: String) throws {
        keys = try CurveKeyFile.loadSecret(at: keyFile)
        _ = try AuthorizedKeys(contentsOf: authorizedKeysFile)
        self.authorizedKeysFile = authorizedKeysFile
    }
}

/// What a reload of the authorized keys file changed.
public struct AuthorizedKeysReload: Sendable, Hashable, CustomStringConvertible {
    /// Keys listed before and no longer: their connections were closed.
    public var removed: [String]
    /// Keys new in the file.
    public var added: [String]
    /// Keys whose role changed (in effect at their next request).
    public var changed: [String]

    /// One line for logs.
    public var description: String {
        "authorized keys reloaded: \(added.count) added, \(removed.count) removed\(removed.isEmpty ? "" : " (" + removed.joined(separator: ", ") + ")"), \(changed.count) changed"
    }
}
