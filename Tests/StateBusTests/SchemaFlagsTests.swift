import Foundation
import StateBus
import StateBusWire
import SwiftProtobuf
import Testing
import ZeroMQ

/// The schema's `optional` (version 1's `PropertySchema.optional`, version 2's flag bit 2)
/// says whether null is a valid value of the property's type (PROTOCOL.md section 17.1):
/// a Swift `Optional`, and a property declared by kind with any kind, which takes null as it
/// takes every value.
@Suite("optional in schemas: null is a valid value")
struct SchemaFlagsTests {
    static let object = ObjectDefinition(
        "Flags",
        properties: [
            PropertyDefinition("nickname", default: String?.none),
            PropertyDefinition("name", default: "anna"),
            PropertyDefinition("anything", kind: nil, default: .null),
            PropertyDefinition("count", kind: .int, default: 0, writable: false)
        ])

    @Test("a Swift Optional and a kind-only any property are optional; a String and an int kind are not; a write of null agrees")
    func optionalMeansNullIsValid() async throws {
        #expect(Self.object.properties.map(\.isOptional) == [true, false, true, false])
        let host = try await Fixtures.host(objects: [Self.object])
        defer { host.stop() }
        let client = try RawClient(context: try Context(), endpoint: host.controlEndpoint)
        defer { client.socket.close() }

        var hello = Statebus_V1_Hello()
        hello.viewID = "raw"
        try client.send(RawClient.request(version: StateBusProtocol.version2, id: 1, .hello(hello)))
        let version2 = try #require(try client.reply()?.welcome.objects.first)
        #expect(version2.propertyTable.flags == [1 | 4, 1, 1 | 4, 0], "flags \(version2.propertyTable.flags)")
        try client.send(RawClient.request(version: StateBusProtocol.version1, id: 2, .hello(hello)))
        let version1 = try #require(try client.reply()?.welcome.objects.first)
        #expect(version1.properties.map(\.optional) == [true, false, true, false])

        // What the flag says is what a write of null meets.
        for (index, property) in ["nickname", "name", "anything"].enumerated() {
            try client.send(
                RawClient.request(
                    id: UInt64(10 + index), RawClient.write(object: "Flags", property: property, value: .null, writeID: UInt64(index + 1))))
            let answer = try #require(try client.reply()?.writeReply)
            #expect(answer.accepted == (property != "name"), "\(property): \(answer)")
        }
    }
}
