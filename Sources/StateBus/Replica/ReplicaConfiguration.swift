import Foundation
import Logging

/// How a replica identifies itself and how patient it is.
public struct ReplicaConfiguration: Sendable {
    /// Unique per replica (the host echoes it with the replica's writes). Default: a UUID.
    public var viewID: String
    /// A name for the host's logs, such as the node name.
    public var nodeName: String
    /// How many heartbeat intervals of silence make the replica stale.
    public var missedHeartbeatsBeforeStale: Int
    /// How long a hello or snapshot may take before it is asked again.
    public var requestTimeout: Duration
    /// How often liveness is checked.
    public var livenessCheckInterval: Duration
    /// The largest message read and the join buffer's size (see ``ReplicaLimits``).
    public var limits = ReplicaLimits()
    /// Where the replica logs.
    public var logger: Logger

    /// Creates a configuration.
    /// - Parameters:
    ///   - nodeName: a name for logs (default: the process name).
    ///   - missedHeartbeatsBeforeStale: silent intervals before going stale (default 3).
    ///   - requestTimeout: how long to wait for a welcome or snapshot (default 2 s).
    ///   - logger: where to log.
    public init(
        nodeName: String = ProcessInfo.processInfo.processName,
        missedHeartbeatsBeforeStale: Int = 3,
        requestTimeout: Duration = .seconds(2),
        logger: Logger = Logger(label: "statebus.replica")
    ) {
        self.viewID = UUID().uuidString
        self.nodeName = nodeName
        self.missedHeartbeatsBeforeStale = max(1, missedHeartbeatsBeforeStale)
        self.requestTimeout = requestTimeout
        self.livenessCheckInterval = .milliseconds(100)
        self.logger = logger
    }
}
