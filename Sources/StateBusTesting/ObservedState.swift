import StateBus
import StateBusWire

/// What one node holds of one object at a moment: the host's epoch and sequence it is at,
/// its values, and whether it is live.
public struct ObservedState: Sendable, Hashable, CustomStringConvertible {
    /// The host start the state belongs to.
    public var epoch: UInt64
    /// The host's sequence number of the last change in it.
    public var sequence: UInt64
    /// Every property's value.
    public var values: [String: Value]
    /// Whether the node is in step with its host (a host is always live).
    public var isLive: Bool

    /// Creates a state.
    public init(epoch: UInt64, sequence: UInt64, values: [String: Value], isLive: Bool) {
        self.epoch = epoch
        self.sequence = sequence
        self.values = values
        self.isLive = isLive
    }

    /// One line: `live at sequence 4 of epoch 123: {"count": 3}`.
    public var description: String {
        "\(isLive ? "live" : "not live") at sequence \(sequence) of epoch \(epoch): \(Value.map(values))"
    }
}

/// A node whose state of an object a test can read: an in-process host (through
/// ``StateHost/observed(_:)``), a ``Replica``, a ``ViewNode`` or a ``HostNode``.
public protocol StateObservable: Sendable {
    /// A name for messages: `host`, `view first`.
    var observedName: String { get }
    /// The node's current state, or `nil` before it has one (a view that has not joined).
    func observedState() async -> ObservedState?
}

/// One object of an in-process host, as a ``StateObservable``.
public struct HostObject: StateObservable {
    /// The host.
    public let host: StateHost
    /// The object's name.
    public let object: String

    /// `host Profile`.
    public var observedName: String { "host \(object)" }

    /// The host's values and sequence of the object (`nil` if it serves no such object).
    public func observedState() async -> ObservedState? {
        guard let values = host.values(of: object), let sequence = host.sequence(of: object) else { return nil }
        return ObservedState(epoch: host.epoch, sequence: sequence, values: values, isLive: true)
    }
}

extension StateHost {
    /// One of this host's objects, to wait on or compare with replicas in a test.
    public func observed(_ object: String) -> HostObject { HostObject(host: self, object: object) }
}

extension Replica: StateObservable {
    /// `replica Profile (view-id)`.
    public var observedName: String { "replica \(object) (\(viewID))" }

    /// What the replica shows, including writes the host has not confirmed yet.
    public func observedState() async -> ObservedState? {
        let state = consistentState
        guard state.connection != .connecting else { return nil }
        return ObservedState(epoch: state.epoch, sequence: state.sequence, values: state.values, isLive: state.connection == .live)
    }
}
