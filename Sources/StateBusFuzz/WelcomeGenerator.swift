import Foundation
import StateBusWire
import SwiftProtobuf

/// Generates version-2 welcomes: the one a host sends (property tables and schema hash, or
/// the hash alone for a view that holds the schema), and hostile ones: tables whose columns
/// disagree, kinds nobody knows, names twice or not UTF-8, the object missing, listed twice
/// or at another index, a version-1 schema, a hash nobody holds, odd endpoints, heartbeat
/// intervals and tokens.
enum WelcomeGenerator {
    /// The session token the stand-in gives.
    static let sessionToken: [UInt8] = Array("stand-in-session".utf8)
    /// The heartbeat interval the stand-in announces and keeps (a host's default): a
    /// replica whose subscription died hears nothing for three of them and reconnects.
    static let heartbeatIntervalMs: UInt32 = 500

    /// The welcome a host sends for the truth, answering request `requestID`, with the
    /// schema or (for a hello that holds the truth's schema hash) without it. Laid out as
    /// `HostWelcome` lays it out: the encoded welcome, then the session token.
    static func reply(truth: StandInTruth, requestID: UInt64, endpoint: String, withSchema: Bool) -> [UInt8] {
        var welcome = base(truth: truth, endpoint: endpoint)
        if withSchema { welcome.objects = truth.objects.map(\.packedSchema) }
        return envelope(requestID: requestID, body: (try? welcome.serializedBytes()) ?? [], token: sessionToken)
    }

    /// A welcome that is wrong in one way or another, answering `requestID`. Whenever its
    /// `Target` differs from the truth's, its hash is not the truth's: the stand-in host
    /// leaves the schema out for a replica that shows the truth's hash, and a welcome that
    /// paired that hash with another schema would (rightly) leave the replica with it.
    static func hostile(truth: StandInTruth, requestID: UInt64, endpoint: String, using random: inout SeededRandom) -> [UInt8] {
        var welcome = base(truth: truth, endpoint: endpoint)
        var objects = truth.objects.map(\.packedSchema)
        var token = sessionToken
        let otherHash = random.oneIn(8) ? 0 : UInt64.random(in: 1...UInt64.max, using: &random)
        let target = truth.targetIndex
        switch Int.random(in: 0..<12, using: &random) {
        case 0:  // kinds fewer or more than names
            let kinds = objects[target].propertyTable.kinds
            objects[target].propertyTable.kinds =
                random.oneIn(2) ? Array(kinds.dropLast(Int.random(in: 1...kinds.count, using: &random))) : kinds + [.int, .map]
            welcome.schemaHash = otherHash
        case 1:  // kinds nobody knows
            objects[target].propertyTable.kinds = objects[target].propertyTable.kinds.map { _ in
                Statebus_V1_ValueKind(rawValue: [9, 99, Int(Int32.max)].randomElement(using: &random)!) ?? .any
            }
            welcome.schemaHash = otherHash
        case 2:  // names twice, empty, many, or none
            var table = objects[target].propertyTable
            switch Int.random(in: 0..<4, using: &random) {
            case 0: table.names = table.names.map { _ in "text" }
            case 1: table.names = table.names.map { _ in "" }
            case 2: table.names = (0..<Int.random(in: 100...5000, using: &random)).map { "p\($0)" }
            default: table.names = []
            }
            objects[target].propertyTable = table
            welcome.schemaHash = otherHash
        case 3:  // the object missing
            objects.remove(at: target)
            welcome.schemaHash = otherHash
        case 4:  // the object twice, the second with a table of its own
            var twin = objects[target]
            twin.propertyTable.names.reverse()
            objects.append(twin)
            welcome.schemaHash = otherHash
        case 5:  // the object at another index
            var stranger = Statebus_V1_ObjectSchema()
            stranger.name = FuzzObjects.objectNames.randomElement(using: &random)!
            objects.insert(contentsOf: Array(repeating: stranger, count: Int.random(in: 1...3, using: &random)), at: 0)
            welcome.schemaHash = otherHash
        case 6:  // no schema, and a hash the replica does not hold
            objects = []
            welcome.schemaHash = otherHash
        case 7:  // a version-1 schema (named properties, no table)
            objects = truth.objects.map(\.schema)
            welcome.schemaHash = otherHash
        case 8:  // heartbeats at once or never, endpoints that lead nowhere
            welcome.heartbeatIntervalMs = [0, 1, 2, UInt32.max].randomElement(using: &random)!
            welcome.updatesEndpoint = ["", "garbage", "ipc:///nonexistent-folder/updates", "tcp://127.0.0.1:1", endpoint + "x", "inproc://x"]
                .randomElement(using: &random)!
        case 9:  // a large session token, no limits
            token = random.bytes(Int.random(in: 1000...65_536, using: &random))
            welcome.maxMessageBytes = 0
        case 10:  // another epoch
            welcome.epoch = random.oneIn(2) ? 0 : truth.epoch &+ 1
        default:  // a name that is not UTF-8: written by hand, as no encoder would
            return envelope(requestID: requestID, body: invalidUTF8Welcome(truth: truth, endpoint: endpoint, hash: otherHash), token: token)
        }
        welcome.objects = objects
        return envelope(requestID: requestID, body: (try? welcome.serializedBytes()) ?? [], token: token)
    }

    /// Whether a reply would leave a replica holding another schema than the truth's under
    /// the truth's hash: a welcome (as the replica reads one) with that hash whose `Target`
    /// has another index, other names or other kinds. Byte-level mutations of a real
    /// welcome can make one; the stand-in host then sends its schema whatever the hello
    /// says, as a host would to a view it cannot trust to hold it.
    static func mayMislead(_ bytes: [UInt8], truth: StandInTruth) -> Bool {
        let name = FuzzObjects.target.name
        let welcome: WelcomeReader? = bytes.withUnsafeBytes { buffer in
            if let envelope = ReplyEnvelope(buffer) {
                guard envelope.body == ReplyEnvelope.welcome else { return nil }
                if let read = try? WelcomeReader(buffer, range: envelope.bodyRange, object: name) { return read }
            }
            guard let reply = try? Statebus_V1_Reply(serializedBytes: bytes, options: WireDecoding.options), case .welcome(let welcome) = reply.body
            else {
                return nil
            }
            return WelcomeReader(welcome, object: name)
        }
        guard let welcome, welcome.schemaHash == truth.schemaHash, !welcome.objectNames.isEmpty else { return false }
        guard let object = welcome.object else { return false }  // refused: the replica keeps what it had
        return object.index != truth.targetIndex || object.names != StandInTruth.names || object.kinds != StandInTruth.kinds
    }

    private static func base(truth: StandInTruth, endpoint: String) -> Statebus_V1_Welcome {
        var welcome = Statebus_V1_Welcome()
        welcome.epoch = truth.epoch
        welcome.updatesEndpoint = endpoint
        welcome.hostName = "stand-in"
        welcome.heartbeatIntervalMs = heartbeatIntervalMs
        welcome.maxMessageBytes = 4 << 20
        welcome.schemaHash = truth.schemaHash
        return welcome
    }

    /// A `Reply` with `body` (a welcome without its token) and the session token, as
    /// `HostWelcome.reply` writes it.
    private static func envelope(requestID: UInt64, body: [UInt8], token: [UInt8]) -> [UInt8] {
        var tokenField = WireWriter()
        tokenField.field(7, bytes: token)
        var out = WireWriter(capacity: body.count + tokenField.count + 24)
        out.field(1, varint: 2)
        out.field(2, varint: requestID)
        out.tag(10, .lengthDelimited)
        out.varint(UInt64(body.count + tokenField.count))
        out.append(contentsOf: body)
        out.append(tokenField)
        return out.bytes
    }

    /// A welcome body whose `Target` table has a name that is not UTF-8.
    private static func invalidUTF8Welcome(truth: StandInTruth, endpoint: String, hash: UInt64) -> [UInt8] {
        var body = WireWriter()
        body.field(1, varint: truth.epoch)
        body.field(2, string: endpoint)
        for object in truth.objects {
            body.field(
                4,
                message: { schema in
                    schema.field(1, string: object.name)
                    schema.field(
                        4,
                        message: { table in
                            for property in object.properties { table.field(1, string: property.name) }
                            table.field(1, bytes: [0x74, 0xC3, 0x28])
                        })
                })
        }
        body.field(8, fixed64: hash)
        return body.bytes
    }
}
