import Foundation
import StateBusWire

/// A host's (or a relay's) welcomes, encoded once: the welcome is the same for every hello
/// but for the session token, and with many properties its schema is most of it.
///
/// Version 1 lists each property as a `PropertySchema`; version 2 lists them column by column
/// (`PropertyTable`) with a ``schemaHash``, and leaves the schema out for a view whose hello
/// shows it already holds it.
struct HostWelcome: Sendable {
    /// The hash of the version-2 schema: FNV-1a (64-bit) over the objects' encoded schemas,
    /// the same for the same schema whatever the host's run.
    let schemaHash: UInt64
    /// The welcome's body (without session token) in each form.
    private let version1: [UInt8]
    private let version2: [UInt8]
    private let version2WithoutSchema: [UInt8]

    /// The welcomes of a host serving `objects`.
    /// - Parameters:
    ///   - epoch: the host's run.
    ///   - updatesEndpoint: where views subscribe to the updates.
    ///   - hostName: the host's name, for the views' logs.
    ///   - heartbeatInterval: how often the host publishes heartbeats (`nil`: never).
    ///   - maxMessageBytes: the largest request the host takes.
    ///   - objects: the objects it serves.
    init(
        epoch: UInt64, updatesEndpoint: String, hostName: String, heartbeatInterval: Duration?, maxMessageBytes: Int, objects: [ObjectDefinition]
    ) throws {
        var base = Statebus_V1_Welcome()
        base.epoch = epoch
        base.updatesEndpoint = updatesEndpoint
        base.hostName = hostName
        base.heartbeatIntervalMs =
            heartbeatInterval.map { UInt32(clamping: $0.wholeMilliseconds) } ?? 0
        base.maxMessageBytes = UInt64(maxMessageBytes)
        let packed = objects.map(\.packedSchema)
        try self.init(base: base, version1Objects: objects.map(\.schema), version2Objects: packed, schemaHash: try Self.hash(of: packed))
    }

    /// Welcomes whose schemas are given in both forms (a relay's, from its upstream's).
    init(base: Statebus_V1_Welcome, version1Objects: [Statebus_V1_ObjectSchema], version2Objects: [Statebus_V1_ObjectSchema], schemaHash: UInt64)
        throws
    {
        var first = base
        first.objects = version1Objects
        first.schemaHash = 0
        version1 = try first.serializedBytes()
        self.schemaHash = schemaHash
        var second = base
        second.objects = []
        second.schemaHash = schemaHash
        version2WithoutSchema = try second.serializedBytes()
        second.objects = version2Objects
        version2 = try second.serializedBytes()
    }

    /// The hash of version-2 object schemas (never 0, which a hello uses for "none").
    static func hash(of schemas: [Statebus_V1_ObjectSchema]) throws -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for schema in schemas {
            for byte in try schema.serializedBytes() as [UInt8] {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01b3
            }
        }
        return hash == 0 ? 1 : hash
    }

    /// The whole `Reply` carrying the welcome, for a hello of the requester's version that
    /// holds the schema with hash `known` (0: none).
    /// - Parameter confirmsByEcho: the connection asked for confirmation by echo and has it.
    func reply(to requester: Requester, knownSchema known: UInt64, sessionToken: [UInt8], confirmsByEcho: Bool = false) -> [UInt8] {
        let body: [UInt8]
        if requester.version == StateBusProtocol.version1 {
            body = version1
        } else {
            body = known == schemaHash ? version2WithoutSchema : version2
        }
        var token = WireWriter(capacity: sessionToken.count + 6)
        token.field(7, bytes: sessionToken)
        if confirmsByEcho { token.field(9, varint: 1) }
        var out = WireWriter(capacity: body.count + token.count + 24)
        out.field(1, varint: UInt64(requester.version))
        out.field(2, varint: requester.requestID)
        out.tag(10, .lengthDelimited)
        out.varint(UInt64(body.count + token.count))
        out.append(contentsOf: body)
        out.append(token)
        return out.bytes
    }
}
