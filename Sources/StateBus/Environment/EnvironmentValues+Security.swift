/// `STATEBUS_KEY_FILE`: the path of this node's CURVE secret key file.
public struct KeyFileKey: ProcessEnvironmentKey {
    /// None.
    public static let defaultValue: String? = nil
    /// `STATEBUS_KEY_FILE`.
    public static let variable = EnvironmentVariableName.keyFile
    /// The path as is, when not empty.
    public static func parse(_ text: String) -> String?? { text.isEmpty ? nil : .some(text) }
}

/// `STATEBUS_HOST_KEY_FILE`: the path of the host's public key file, for a view.
public struct HostKeyFileKey: ProcessEnvironmentKey {
    /// None.
    public static let defaultValue: String? = nil
    /// `STATEBUS_HOST_KEY_FILE`.
    public static let variable = EnvironmentVariableName.hostKeyFile
    /// The path as is, when not empty.
    public static func parse(_ text: String) -> String?? { text.isEmpty ? nil : .some(text) }
}

extension EnvironmentValues {
    /// This node's secret key file (`STATEBUS_KEY_FILE`), if injected: a path, never a key.
    public var keyFile: String? {
        get { self[KeyFileKey.self] }
        set { self[KeyFileKey.self] = newValue }
    }

    /// The host's public key file (`STATEBUS_HOST_KEY_FILE`), if injected.
    public var hostKeyFile: String? {
        get { self[HostKeyFileKey.self] }
        set { self[HostKeyFileKey.self] = newValue }
    }

    /// The CURVE settings the two files name, or `nil` when neither is set.
    /// - Throws: ``KeyFileError`` when a file is unusable, `StateBusError` when only one is set.
    public func replicaSecurity() throws -> ReplicaSecurity? {
        switch (keyFile, hostKeyFile) {
        case (nil, nil): return nil
        case (let keyFile?, let hostKeyFile?): return try ReplicaSecurity(keyFile: keyFile, hostKey: hostKeyFile)
        default:
            throw StateBusError(
                .other, "STATEBUS_KEY_FILE and STATEBUS_HOST_KEY_FILE go together: a view with keys needs its own key and its host's public key")
        }
    }
}
