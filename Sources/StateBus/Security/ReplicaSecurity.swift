import ZeroMQ

/// A view's CURVE identity and the host it trusts: set ``ReplicaConfiguration/security``
/// to join a host that has keys (``HostSecurity``).
///
/// Both of the replica's sockets then speak CURVE: traffic is encrypted, the host proves it
/// holds the secret half of ``hostPublicKey``, and the replica proves it holds
/// ``keys``, whose public key must be in the host's authorized keys file.
public struct ReplicaSecurity: Sendable {
    /// The view's own key pair.
    public var keys: CurveKeyPair
    /// The host's public key (Z85), as its `.pub` file holds it.
    public var hostPublicKey: String

    /// Creates the settings.
    /// - Parameters:
    ///   - keys: the view's key pair.
    ///   - hostPublicKey: the host's Z85 public key.
    public init(keys: CurveKeyPair, hostPublicKey: String) {
        self.keys = keys
        self.hostPublicKey = hostPublicKey
    }

    /// Loads both from files, as `--key view.key --host-key host.pub`.
    /// - Parameters:
    ///   - keyFile: the view's secret key file (mode 0600).
    ///   - hostKey: the host's `.pub` file, or its Z85 public key.
    /// - Throws: ``KeyFileError``.
    public init(keyFile: String, hostKey: String) throws(KeyFileError) {
        keys = try CurveKeyFile.loadSecret(at: keyFile)
        hostPublicKey = try CurveKeyFile.loadPublic(at: hostKey)
    }
}
