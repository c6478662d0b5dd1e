/// The topic frames of the updates channel (see proto/PROTOCOL.md, "Updates channel").
///
/// Every topic ends in a NUL byte so that a subscription to one object's topic does not
/// also match another object whose name merely starts the same way.
enum Topic {
    /// Version-1 update batches of one object: `u/<object>\0`.
    static func updates(_ object: String) -> [UInt8] { Array("u/\(object)".utf8) + [0] }
    /// Version-2 runs of updates of one object: `u2/<object>\0`.
    static func runs(_ object: String) -> [UInt8] { Array("u2/\(object)".utf8) + [0] }
    /// Heartbeats: `hb\0`.
    static let heartbeat: [UInt8] = Array("hb".utf8) + [0]
    /// One view's join marker: `j/<view id>\0`.
    static func join(_ viewID: String) -> [UInt8] { Array("j/\(viewID)".utf8) + [0] }
    /// The join-topic prefix, to recognise join subscriptions at the host.
    static let joinPrefix: [UInt8] = Array("j/".utf8)
}

/// Where a client subscribes, from what a welcome announces.
package enum UpdatesEndpoint {
    /// A wildcard host in the announced endpoint (`tcp://0.0.0.0:5556`, `tcp://*:5556`) is
    /// replaced by the host the client used for the control endpoint.
    package static func reachable(_ announced: String, controlEndpoint: String) -> String {
        guard announced.hasPrefix("tcp://"), controlEndpoint.hasPrefix("tcp://") else { return announced }
        let rest = announced.dropFirst("tcp://".count)
        guard let colon = rest.lastIndex(of: ":") else { return announced }
        let host = rest[..<colon]
        guard host == "*" || host == "0.0.0.0" || host == "[::]" else { return announced }
        let controlRest = controlEndpoint.dropFirst("tcp://".count)
        guard let controlColon = controlRest.lastIndex(of: ":") else { return announced }
        return "tcp://\(controlRest[..<controlColon])\(rest[colon...])"
    }

    /// The topic of one object's version-1 updates, `u/<object>\0` (see ``Topic``).
    package static func topic(of object: String) -> [UInt8] { Topic.updates(object) }

    /// The topic of one object's version-2 runs, `u2/<object>\0`.
    package static func runTopic(of object: String) -> [UInt8] { Topic.runs(object) }

    /// The topic of one view's join marker, `j/<view id>\0`.
    package static func joinTopic(of viewID: String) -> [UInt8] { Topic.join(viewID) }
}
