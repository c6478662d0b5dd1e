import StateBusWire

/// An error a user can act on: a rejected write, an unknown object, a closed replica.
///
/// Errors the host sends (rejections) keep the host's code and message; `object` and
/// `property` say where.
public struct StateBusError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of error.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// A message was not a valid StateBus message.
        case badRequest
        /// The peer speaks another protocol version.
        case unsupportedVersion
        /// No object of that name.
        case unknownObject
        /// No property of that name on the object.
        case unknownProperty
        /// The property is not writable by views.
        case readOnly
        /// The value does not have the property's type.
        case typeMismatch
        /// The path does not lead into the property's value.
        case invalidPath
        /// The model's validator refused the value.
        case validationFailed
        /// Compare-and-set failed: the property changed since the expected version.
        case versionConflict
        /// The message is larger than the host accepts.
        case tooLarge
        /// The host could not make a persisted write durable.
        case persistenceFailed
        /// A request arrived before the view said hello.
        case notJoined
        /// The replica or host was closed before the operation finished.
        case closed
        /// The operation did not finish before its deadline.
        case timeout
        /// Another live connection holds this view id: each replica needs an id of its own
        /// (``ReplicaConfiguration/viewID``).
        case viewIDInUse
        /// The replica's write queue is full (``ReplicaConfiguration/maxQueuedWrites`` or
        /// ``ReplicaConfiguration/maxQueuedWriteBytes``): the write was not made. Wait for
        /// answers, or use ``Replica/write(_:waitingUpTo:)``, which waits for room.
        case overloaded
        /// The endpoint is an ipc socket in a runtime folder that is not private (another
        /// user could own the socket), so the replica does not connect; see the message.
        case unsafeEndpoint
        /// The connection's CURVE key may not do this: its role in the host's authorized
        /// keys file is `read`, its `write` list does not name the object, it is no longer
        /// listed, or the view id belongs to another key. From a replica's own connection
        /// attempt: the host refused the key during the handshake.
        case forbidden
        /// The secure handshake with the host failed: it expects CURVE and this replica has
        /// no keys (or the other way round), or the host's public key given is not the
        /// host's. See the message; waiting does not cure it.
        case handshakeFailed
        /// The object has no action of that name (``Action()``), or the call's arguments do
        /// not match its parameters.
        case unknownAction
        /// The action ran on the host and threw: the message is the thrown error's
        /// description. Changes it made before throwing stay applied.
        case actionFailed
        /// A call's outcome is unknown: the connection to the host was replaced while it was
        /// in flight (the host restarted, or went silent), so the action may or may not have
        /// run. Read the state before calling again.
        case interrupted
        /// The host is a standby of a high-availability group (`statebus host --ha`), or a
        /// leader that lost its lease: another host leads and takes the writes. A replica
        /// given several control endpoints follows the leader by itself; the message names
        /// the leader's control endpoint when the host knows it.
        case notLeader
        /// Something else went wrong; see the message.
        case other
    }

    /// What kind of error.
    public let code: Code
    /// What was wrong, where, and what to do.
    public let message: String
    /// The object concerned, when there is one.
    public let object: String?
    /// The property concerned, when there is one.
    public let property: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, object: String? = nil, property: String? = nil) {
        self.code = code
        self.message = message
        self.object = object
        self.property = property
    }

    /// "code: message", with the object and property when known.
    public var description: String {
        var place = ""
        if let object { place = object }
        if let property { place += place.isEmpty ? property : ".\(property)" }
        return place.isEmpty ? "\(code.rawValue): \(message)" : "\(code.rawValue) (\(place)): \(message)"
    }

}

extension StateBusError.Code {
    /// Matches by code, so `catch StateBusError.Code.validationFailed` works in catch clauses.
    public static func ~= (pattern: StateBusError.Code, error: any Error) -> Bool {
        (error as? StateBusError)?.code == pattern
    }
}
