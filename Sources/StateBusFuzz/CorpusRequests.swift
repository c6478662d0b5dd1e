import Foundation
import StateBusWire
import SwiftProtobuf

/// The requests of the seed corpus, in both protocol versions a host speaks: version 1 as
/// the generated code encodes it (names everywhere), version 2 as a Swift view sends it (a
/// hello with and without a schema hash; writes by `WriteCodec`, the write path's own
/// encoder, with element operations and compare-and-set). In the order they are sent:
/// hellos first, goodbyes last.
enum CorpusRequests {
    /// The view id every corpus request names.
    static let viewID = "7F3A9C2E-0B1D-4E5F-8A6B-1C2D3E4F5A6B"

    /// Each request's name and encoded frame.
    static func all() -> [(name: String, bytes: [UInt8])] {
        var requests: [(String, [UInt8])] = []
        for (name, request) in version1() { requests.append(("v1-\(name)", (try? request.serializedBytes()) ?? [])) }
        requests += version2()
        // Goodbyes last, so every other request is answered first.
        var goodbye = Statebus_V1_Goodbye()
        goodbye.viewID = viewID
        for version in StateBusProtocol.versions {
            requests.append(("v\(version)-goodbye", (try? request(version: version, 99, .goodbye(goodbye)).serializedBytes()) ?? []))
        }
        return requests
    }

    private static func request(version: UInt32, _ id: UInt64, _ body: Statebus_V1_Request.OneOf_Body) -> Statebus_V1_Request {
        var request = Statebus_V1_Request()
        request.protocolVersion = version
        request.requestID = id
        request.body = body
        return request
    }

    /// Version 1: hello, snapshot, ping, and writes of every kind (whole values, paths into
    /// maps and lists, compare-and-set, several changes, a refused object).
    private static func version1() -> [(String, Statebus_V1_Request)] {
        func write(_ id: UInt64, _ changes: [(String, ValuePath, Value, UInt64?)]) -> Statebus_V1_Request {
            var write = Statebus_V1_WriteRequest()
            write.object = "Target"
            write.writeID = id
            write.viewID = viewID
            write.changes = changes.map { property, path, value, expected in
                var change = Statebus_V1_Change()
                change.property = property
                change.path = path.wire
                change.value = value.wire
                if let expected { change.expectedVersion = expected }
                return change
            }
            return request(version: 1, 100 + id, .write(write))
        }
        var hello = Statebus_V1_Hello()
        hello.viewID = viewID
        hello.nodeName = "notes"
        hello.objects = ["Target"]
        var snapshot = Statebus_V1_SnapshotRequest()
        snapshot.object = "Target"
        var sentinel = snapshot
        sentinel.object = "Sentinel"
        let user: Value = .map(["name": "bo", "email": "bo@example.com", "tags": .list([.string("x")])])
        var sentinelWrite = write(12, [("secret", .root, "mine", nil)])
        sentinelWrite.write.object = "Sentinel"
        return [
            ("hello", request(version: 1, 1, .hello(hello))),
            ("snapshot", request(version: 1, 2, .snapshot(snapshot))),
            ("snapshot-sentinel", request(version: 1, 3, .snapshot(sentinel))),
            ("ping", request(version: 1, 4, .ping(Statebus_V1_Ping()))),
            ("write-text", write(1, [("text", .root, "hi", nil)])),
            ("write-count", write(2, [("count", .root, .int(7), nil)])),
            ("write-ratio", write(3, [("ratio", .root, .double(1.5), nil)])),
            ("write-flag", write(4, [("flag", .root, .bool(true), nil)])),
            ("write-user", write(5, [("user", .root, user, nil)])),
            ("write-user-email", write(6, [("user", ValuePath([.key("email")]), "c@example.com", nil)])),
            ("write-user-tag", write(7, [("user", ValuePath([.key("tags"), .index(0)]), "y", nil)])),
            ("write-any", write(8, [("any", .root, .list([.null, .bytes(Data([0, 1])), .map(["k": .double(2)])]), nil)])),
            ("write-durable", write(9, [("durable", .root, .int(3), nil)])),
            ("write-cas", write(10, [("count", .root, .int(8), 2)])),
            ("write-several", write(11, [("text", .root, "both", nil), ("count", .root, .int(9), nil)])),
            ("write-sentinel", sentinelWrite)
        ]
    }

    /// Version 2: hellos (a first one, and one that holds the host's schema hash),
    /// snapshot, ping, and writes as `WriteCodec` encodes them.
    private static func version2() -> [(String, [UInt8])] {
        func encoded(_ request: Statebus_V1_Request) -> [UInt8] { (try? request.serializedBytes()) ?? [] }
        func write(_ id: UInt64, _ changes: [PropertyChange], object: String = "Target") -> [UInt8] {
            WriteCodec.request(
                WireWrite(
                    protocolVersion: StateBusProtocol.version2, requestID: 200 + id, object: object, writeID: 100 + id, viewID: viewID,
                    changes: changes))
        }
        var hello = Statebus_V1_Hello()
        hello.viewID = viewID
        hello.nodeName = "notes"
        hello.objects = ["Target"]
        var known = hello
        known.schemaHash = FuzzObjects.schemaHash(of: FuzzObjects.all)
        var snapshot = Statebus_V1_SnapshotRequest()
        snapshot.object = "Target"
        return [
            ("v2-hello", encoded(request(version: 2, 21, .hello(hello)))),
            ("v2-hello-schema-held", encoded(request(version: 2, 22, .hello(known)))),
            ("v2-snapshot", encoded(request(version: 2, 23, .snapshot(snapshot)))),
            ("v2-ping", encoded(request(version: 2, 24, .ping(Statebus_V1_Ping())))),
            ("v2-write-text", write(1, [PropertyChange("text", to: "two")])),
            ("v2-write-count-cas", write(2, [PropertyChange("count", to: .int(11), expectedVersion: 0)])),
            ("v2-write-any", write(3, [PropertyChange("any", to: .map(["list": .list([.int(1), .string("x")]), "b": .bytes(Data([9]))]))])),
            ("v2-write-user-email", write(4, [PropertyChange("user", at: [.key("email")], to: "d@example.com")])),
            ("v2-write-tag-insert", write(5, [PropertyChange("user", .insert, at: [.key("tags")], element: "new", position: 1)])),
            ("v2-write-tag-move", write(6, [PropertyChange("user", .move, at: [.key("tags"), .index(0)], position: 2)])),
            ("v2-write-tag-remove", write(7, [PropertyChange("user", .remove, at: [.key("tags"), .index(0)])])),
            ("v2-write-several", write(8, [PropertyChange("ratio", to: .double(-0.25)), PropertyChange("flag", to: .bool(false))])),
            ("v2-write-sentinel", write(9, [PropertyChange("locked", to: .int(1))], object: "Sentinel"))
        ]
    }
}
