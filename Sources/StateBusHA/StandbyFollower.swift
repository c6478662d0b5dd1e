import Logging
import StateBus
import StateBusWire

/// A standby's copy of the leader's objects: one replica per object, joined to the leader as
/// a view is, so that the standby takes over from the state it last received instead of
/// from its defaults.
///
/// With keys, the group's hosts share one key pair (views trust one host key whichever host
/// leads), and a standby follows with that pair: the authorized keys file lists the group's
/// public key (role `read` suffices).
final class StandbyFollower: Sendable {
    /// The leader's control endpoint.
    let leaderControl: String
    private let replicas: [Replica]

    /// Starts following.
    /// - Throws: `StateBusError` when a replica cannot be made.
    init(objects: [String], leaderControl: String, hostName: String, security: HostSecurity?) throws {
        self.leaderControl = leaderControl
        var configuration = ReplicaConfiguration(nodeName: "standby \(hostName)")
        // The follower closes when the leader is gone: a goodbye nobody hears must not hold
        // up the takeover.
        configuration.goodbyeLinger = .zero
        if let security {
            configuration.security = ReplicaSecurity(keys: security.keys, hostPublicKey: security.keys.publicKey)
        }
        replicas = try objects.map { try Replica(object: $0, controlEndpoint: leaderControl, configuration: configuration) }
    }

    /// The state followed so far: each object's values, for the objects whose snapshot has
    /// arrived (a standby that never joined has nothing to offer, and its host starts from
    /// the defaults and etcd's stored values).
    func followedValues() -> [String: [String: Value]] {
        var values: [String: [String: Value]] = [:]
        for replica in replicas {
            let state = replica.consistentState
            if state.epoch != 0 { values[replica.object] = state.values }
        }
        return values
    }

    /// Whether every object is live on the leader.
    var isLive: Bool { replicas.allSatisfy { $0.connectionState == .live } }

    /// Stops following.
    func close() {
        for replica in replicas { replica.close() }
    }
}
