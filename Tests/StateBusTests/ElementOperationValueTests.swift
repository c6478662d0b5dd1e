import Foundation
import IdentifiedCollections
import StateBus
import StateBusWire
import SwiftProtobuf
import Testing
import ZeroMQ

private struct Chore: Codable, Identifiable, Sendable {
    var id: Int
    var title: String
}

/// `REMOVE` and `MOVE` take no value (PROTOCOL.md section 9, "Keyed collections"): null,
/// however protobuf writes it, is taken; any other value is refused, not ignored.
@Suite("The value of REMOVE and MOVE: null or refused")
struct ElementOperationValueTests {
    static let board = ObjectDefinition(
        "Board",
        properties: [
            PropertyDefinition("tasks", default: IdentifiedArrayOf<Chore>(uniqueElements: (1...6).map { Chore(id: $0, title: "chore \($0)") }))
        ])

    /// A write of one element operation on chore `id`; `value` as given (`nil`: absent).
    static func change(_ operation: Statebus_V1_ElementOperation, id: Int64, value: Statebus_V1_Value?, writeID: UInt64) -> Statebus_V1_Request {
        var write = Statebus_V1_WriteRequest()
        write.object = "Board"
        write.writeID = writeID
        write.viewID = "raw"
        var change = Statebus_V1_Change()
        change.property = "tasks"
        var step = Statebus_V1_PathComponent()
        step.id.intValue = id
        change.path = [step]
        change.operation = operation
        if let value { change.value = value }
        write.changes = [change]
        return RawClient.request(id: writeID, .write(write))
    }

    @Test("absent, empty and null_value are taken; a string, an int or a list is refused BAD_REQUEST naming the property, and nothing changes")
    func nullOrRefused() async throws {
        let host = try await Fixtures.host(objects: [Self.board])
        defer { host.stop() }
        let client = try RawClient(context: try Context(), endpoint: host.controlEndpoint)
        defer { client.socket.close() }
        try client.hello()

        var text = Statebus_V1_Value()
        text.stringValue = "gone"
        var number = Statebus_V1_Value()
        number.intValue = 3
        var list = Statebus_V1_Value()
        list.listValue = Statebus_V1_ListValue()
        var null = Statebus_V1_Value()
        null.nullValue = .nullValue
        let before = host.value(of: "tasks", in: "Board")
        var writeID: UInt64 = 0
        for (operation, value) in [(Statebus_V1_ElementOperation.remove, text), (.move, number), (.remove, list), (.move, text)] {
            writeID += 1
            try client.send(Self.change(operation, id: 1, value: value, writeID: writeID))
            let answer = try #require(try client.reply()?.writeReply)
            #expect(!answer.accepted && answer.rejection.code == .badRequest, "\(operation) with \(value): \(answer)")
            #expect(answer.rejection.object == "Board" && answer.rejection.property == "tasks")
            #expect(answer.rejection.message.contains("takes no value"), "\(answer.rejection.message)")
        }
        #expect(host.value(of: "tasks", in: "Board") == before)
        #expect(host.sequence(of: "Board") == 0)

        // Null every way protobuf writes it: no value, a value with no field, null_value.
        for (operation, id, value) in [
            (Statebus_V1_ElementOperation.remove, Int64(1), Statebus_V1_Value?.none), (.remove, 2, Statebus_V1_Value()), (.move, 3, null),
            (.remove, 4, null), (.move, 5, Statebus_V1_Value()), (.move, 6, nil)
        ] {
            writeID += 1
            try client.send(Self.change(operation, id: id, value: value, writeID: writeID))
            let answer = try #require(try client.reply()?.writeReply)
            #expect(answer.accepted, "\(operation) of \(id) with \(String(describing: value)): \(answer)")
        }
        let ids = host.value(of: "tasks", in: "Board").flatMap { value -> [Value]? in
            guard case .list(let items) = value else { return nil }
            return items.map { item in
                guard case .map(let fields) = item else { return .null }
                return fields["id"] ?? .null
            }
        }
        #expect(ids == [.int(6), .int(5), .int(3)], "\(String(describing: ids))")
    }
}
