import Foundation
import StateBusWire

/// A request a follower of a host sends on its control connection, besides the writes and
/// calls it carries (a view, and a relay towards its upstream): the domain form, written
/// once; ``wire`` is the generated message it travels as (PROTOCOL.md sections 4 and 5).
enum FollowerRequest {
    /// What a hello says.
    struct Hello {
        /// The view id the follower binds (a relay's own id).
        var viewID: String
        /// Its process's name, for the host's list of views.
        var nodeName: String
        /// The objects it follows.
        var objects: [String]
        /// The last welcome's token: proves the view id is still the follower's.
        var sessionToken: Data
        /// The hash of the schema it holds (0: none), so the host need not send it again.
        var schemaHash: UInt64
        /// Asks the host to confirm accepted writes by their echo.
        var confirmsByEcho = false
        /// A relay, not a view.
        var relay = false
    }

    /// Binds the follower's view id and asks for the objects' schema and the updates
    /// endpoint.
    case hello(Hello)
    /// Asks for a snapshot of one object.
    case snapshot(object: String)
    /// Keeps the view id bound, and tells a slow host from a dropped connection.
    case ping
    /// Leaves: the host forgets the view at once instead of at its lease's end.
    case goodbye(viewID: String)

    /// The generated message, without protocol version and request id (``ControlRequests``
    /// stamps them).
    var wire: Statebus_V1_Request {
        var request = Statebus_V1_Request()
        switch self {
        case .hello(let hello):
            var wire = Statebus_V1_Hello()
            wire.viewID = hello.viewID
            wire.nodeName = hello.nodeName
            wire.objects = hello.objects
            wire.sessionToken = hello.sessionToken
            wire.schemaHash = hello.schemaHash
            wire.confirmsByEcho = hello.confirmsByEcho
            wire.relay = hello.relay
            request.hello = wire
        case .snapshot(let object):
            var snapshot = Statebus_V1_SnapshotRequest()
            snapshot.object = object
            request.snapshot = snapshot
        case .ping:
            request.ping = Statebus_V1_Ping()
        case .goodbye(let viewID):
            var goodbye = Statebus_V1_Goodbye()
            goodbye.viewID = viewID
            request.goodbye = goodbye
        }
        return request
    }
}
