/// The topic frames of the updates channel (see proto/PROTOCOL.md, "Updates channel").
///
/// Every topic ends in a NUL byte so that a subscription to one object's topic does not
/// also match another object whose name merely starts the same way.
enum Topic {
    /// Update batches of one object: `u/<object>\0`.
    static func updates(_ object: String) -> [UInt8] { Array("u/\(object)".utf8) + [0] }
    /// Heartbeats: `hb\0`.
    static let heartbeat: [UInt8] = Array("hb".utf8) + [0]
    /// One view's join marker: `j/<view id>\0`.
    static func join(_ viewID: String) -> [UInt8] { Array("j/\(viewID)".utf8) + [0] }
    /// The join-topic prefix, to recognise join subscriptions at the host.
    static let joinPrefix: [UInt8] = Array("j/".utf8)
}
