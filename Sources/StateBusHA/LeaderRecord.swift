import Foundation

/// What a leader stores in its group's leader key: what views and standbys need to find it,
/// and what a candidate checks before it joins the group.
struct LeaderRecord: Codable, Sendable, Equatable {
    /// The control endpoint others reach the leader at.
    var control: String
    /// The host's name, for logs and `statebus views`.
    var host: String
    /// The names of the objects the group serves, in order.
    var objects: [String]
    /// The host's process id, for logs.
    var pid: Int32
    /// The leader's epoch (its welcome's), once it serves; `nil` while it campaigns.
    var epoch: UInt64?

    /// The record as JSON, the leader key's value.
    func encoded() -> [UInt8] {
        (try? Array(JSONEncoder().encode(self))) ?? []
    }

    /// Reads a record; `nil` for one that is not a StateBus leader record.
    init?(_ bytes: [UInt8]) {
        guard let record = try? JSONDecoder().decode(LeaderRecord.self, from: Data(bytes)) else { return nil }
        self = record
    }

    init(control: String, host: String, objects: [String], pid: Int32) {
        self.control = control
        self.host = host
        self.objects = objects
        self.pid = pid
    }
}
