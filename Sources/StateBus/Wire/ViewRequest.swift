import Foundation
import StateBusWire

/// A request a server of a control socket (a host, a relay) reads from a view or a relay
/// downstream: the domain form, read once from the generated message (PROTOCOL.md sections 4
/// to 6), so that the servers decide on requests without touching generated types.
///
/// A write and a call keep the message they came in (``WriteRequest``, ``CallRequest``): a
/// relay forwards them upstream as they are, converting nothing; a host converts a write's
/// changes once it has checked it for unknown fields.
enum ViewRequest {
    /// Binds a view id to the connection and asks for the schema and the updates endpoint.
    case hello(FollowerRequest.Hello)
    /// Asks for a snapshot of one object.
    case snapshot(object: String)
    /// A write of one object's properties.
    case write(WriteRequest)
    /// A call of an object's action.
    case call(CallRequest)
    /// Asks for the list of connected views.
    case views
    /// Keeps a view id bound.
    case ping
    /// The view leaves.
    case goodbye(viewID: String)
    /// A request with no body: malformed.
    case empty

    /// A write as a view sent it.
    struct WriteRequest: Sendable {
        /// The message, for a relay to forward as it came.
        let wire: Statebus_V1_WriteRequest

        /// The object written.
        var object: String { wire.object }
        /// The view's id for the write (empty: an anonymous writer).
        var viewID: String { wire.viewID }
        /// The id the view gave the write, echoed in its answer.
        var writeID: UInt64 { wire.writeID }
        /// The changes, converted from the wire.
        var changes: [PropertyChange] { wire.changes.map(PropertyChange.init(wire:)) }
        /// The first property whose change carries fields this side does not know, or `""`
        /// when the unknown fields are the write's own; `nil` when there are none: a client
        /// built for another schema, whose write is refused rather than guessed at.
        var propertyWithUnknownFields: String? {
            if let change = wire.changes.first(where: \.carriesUnknownFields) { return change.property }
            return wire.unknownFields.data.isEmpty ? nil : ""
        }
    }

    /// A call as a view sent it.
    struct CallRequest: Sendable {
        /// The message, for a relay to forward as it came.
        let wire: Statebus_V1_CallRequest

        /// The object whose action is called.
        var object: String { wire.object }
        /// The action's name.
        var action: String { wire.action }
        /// The id the view gave the call, echoed in its answer.
        var callID: UInt64 { wire.callID }
        /// The caller's view id, bound by its hello.
        var viewID: String { wire.viewID }
        /// How many arguments it passes.
        var argumentCount: Int { wire.arguments.count }
        /// The arguments, converted from the wire.
        var arguments: [Value] { wire.arguments.map(Value.init(wire:)) }
        /// Whether the call or an argument carries fields this side does not know.
        var carriesUnknownFields: Bool { !wire.unknownFields.data.isEmpty || wire.arguments.contains(where: \.carriesUnknownFields) }
    }

    /// Reads the body of a decoded request.
    init(wire: Statebus_V1_Request) {
        switch wire.body {
        case .hello(let hello):
            self = .hello(
                FollowerRequest.Hello(
                    viewID: hello.viewID, nodeName: hello.nodeName, objects: hello.objects, sessionToken: hello.sessionToken,
                    schemaHash: hello.schemaHash, confirmsByEcho: hello.confirmsByEcho, relay: hello.relay))
        case .snapshot(let snapshot): self = .snapshot(object: snapshot.object)
        case .write(let write): self = .write(WriteRequest(wire: write))
        case .call(let call): self = .call(CallRequest(wire: call))
        case .views: self = .views
        case .ping: self = .ping
        case .goodbye(let goodbye): self = .goodbye(viewID: goodbye.viewID)
        case .none: self = .empty
        }
    }

    /// Whether only the leader of a high-availability group may answer it: pings and
    /// goodbyes any host answers. The views list is the leader's too: a standby's own (its
    /// views are on their way to the leader) would hide the group's.
    var needsLeader: Bool {
        switch self {
        case .hello, .snapshot, .write, .call, .views: true
        case .ping, .goodbye, .empty: false
        }
    }

    /// Whether it is a write or a call.
    var writes: Bool {
        switch self {
        case .write, .call: true
        default: false
        }
    }

    /// How a refusal of it is answered: a write with its rejection, a call with its failure,
    /// anything else with an error reply.
    var refusalAnswer: RefusalAnswer {
        switch self {
        case .call(let call): .call(callID: call.callID)
        case .write(let write): .write(writeID: write.writeID)
        default: .error
        }
    }

    /// How a request not taken is answered, so the view that waits for it hears it where it
    /// waits.
    enum RefusalAnswer: Equatable {
        /// An error reply.
        case error
        /// A write's rejection, so the view rolls the write back.
        case write(writeID: UInt64)
        /// A call's failure.
        case call(callID: UInt64)
    }
}

/// A request's envelope and body, decoded from a control socket's frame.
struct DecodedRequest {
    /// The request's `protocol_version` (any: the reader checks it).
    let protocolVersion: UInt32
    /// The id the view gave the request, echoed in the reply.
    let requestID: UInt64
    /// What it asks.
    let request: ViewRequest

    /// Decodes a request where the frame is held, with no copy of a large write.
    /// - Throws: when the bytes are not a StateBus request.
    init(bytes: UnsafeRawBufferPointer) throws {
        let wire = try Statebus_V1_Request(
            serializedBytes: Data(
                bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!), count: bytes.count,
                deallocator: .none),
            options: WireDecoding.options)
        protocolVersion = wire.protocolVersion
        requestID = wire.requestID
        request = ViewRequest(wire: wire)
    }
}
