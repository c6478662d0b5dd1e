import StateBus
import StateBusCommandLine

extension ConnectionOptions {
    /// A replica of the object these options name, on the host they name; it starts joining
    /// at once.
    ///
    /// - Parameters:
    ///   - nodeName: the name the host logs for this process.
    ///   - pinnedCPU: the low-latency profile's CPU (`--pin-cpu`), or `nil`.
    /// - Throws: `ValidationError` when no object is named, or what `Replica.init` throws.
    func replica(nodeName: String, pinnedCPU: Int32? = nil) throws -> Replica {
        var configuration = ReplicaConfiguration(nodeName: nodeName)
        configuration.security = try security()
        configuration.pinnedCPU = pinnedCPU
        return try Replica(object: try requireObject(), controlEndpoint: controlEndpoint, configuration: configuration)
    }

    /// Joins the object's replica and waits until it is live, for the one-shot commands
    /// (`get`, `set`, `dump`) that read or write once and exit.
    ///
    /// - Throws: what ``replica(nodeName:)`` throws, or the replica's error when it is not
    ///   live within `--timeout` (the replica is closed first).
    func liveReplica() async throws -> Replica {
        let replica = try replica(nodeName: "statebus-cli")
        do {
            try await replica.waitUntilLive(timeout: deadline)
        } catch {
            replica.close()
            throw error
        }
        return replica
    }
}
