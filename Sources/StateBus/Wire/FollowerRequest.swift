import Foundation
import StateBusWire

/// A request a follower of a host sends on its control connection (a view, a relay towards
/// its upstream, a one-shot probe): the domain form, written once. A view's own writes are
/// not among them (the write path encodes those itself, `WriteCodec`); a relay's forwarded
/// writes are; ``wire`` is the generated message it travels as (PROTOCOL.md
/// sections 4 to 6).
enum FollowerRequest: Sendable {
    /// What a hello says.
    struct Hello: Sendable {
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

        /// The hello of a one-shot probe: no view id, nothing followed; the host answers
        /// with its welcome (a standby with `NOT_LEADER`).
        static let probe = Hello(viewID: "", nodeName: "", objects: [], sessionToken: Data(), schemaHash: 0)
    }

    /// A call of an object's action.
    struct Call: Sendable {
        /// The object whose action is called.
        var object: String
        /// The action's name.
        var action: String
        /// One argument per parameter of the action, in order.
        var arguments: [Value]
        /// The caller's view id, bound by its hello.
        var viewID = ""
        /// The id the caller gave the call, echoed in its answer.
        var callID: UInt64
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
    /// Calls an action.
    case call(Call)
    /// Asks for the list of connected views.
    case views
    /// A view's write that a relay passes upstream as it came.
    case forwardedWrite(ViewRequest.WriteRequest)
    /// A view's call that a relay passes upstream as it came.
    case forwardedCall(ViewRequest.CallRequest)

    /// The request encoded for protocol `version` with id `requestID`.
    func encoded(version: UInt32, requestID: UInt64) throws -> [UInt8] {
        var request = wire
        request.protocolVersion = version
        request.requestID = requestID
        return try request.serializedBytes()
    }

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
        case .call(let call):
            var wire = Statebus_V1_CallRequest()
            wire.object = call.object
            wire.action = call.action
            wire.arguments = call.arguments.map(\.wire)
            wire.viewID = call.viewID
            wire.callID = call.callID
            request.call = wire
        case .views:
            request.views = Statebus_V1_ViewsRequest()
        case .forwardedWrite(let write):
            request.write = write.wire
        case .forwardedCall(let call):
            request.call = call.wire
        }
        return request
    }
}
