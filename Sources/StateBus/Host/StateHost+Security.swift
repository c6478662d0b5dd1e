import ZeroMQ

extension StateHost {
    /// Reads the authorized keys file again (`statebus host` does on SIGHUP): new keys get
    /// in, changed roles apply at each key's next request, and removed keys are cut off:
    /// every subscriber connection is closed (the others reconnect and resync by
    /// themselves), and every further request of a removed key is refused with `forbidden`.
    /// - Returns: what changed.
    /// - Throws: ``AuthorizedKeysError`` for a malformed file (the previous list stays in
    ///   force), `StateBusError` when the host has no keys.
    @discardableResult
    public func reloadAuthorizedKeys() async throws -> AuthorizedKeysReload {
        let engine = self.engine
        return try await loop.submit { _ in
            guard let keyGuard = engine.value.keyGuard else {
                throw StateBusError(.other, "this host has no keys (HostConfiguration.security), so it has no authorized keys to reload")
            }
            return try keyGuard.reload()
        }
    }
}
