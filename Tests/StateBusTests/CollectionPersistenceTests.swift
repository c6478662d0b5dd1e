import Foundation
import IdentifiedCollections
import Testing

@_spi(Testing) @testable import StateBus

/// An element of a persisted keyed collection.
struct StoredItem: Codable, Sendable, Identifiable, Equatable {
    var id: String
    var title: String
}

@Suite("Persisted keyed collections: one row per element")
struct CollectionPersistenceTests {
    static let list = ObjectDefinition(
        "List",
        properties: [
            PropertyDefinition(
                "items", default: IdentifiedArrayOf<StoredItem>(uniqueElements: (0..<10).map { StoredItem(id: "i\($0)", title: "item \($0)") }),
                persisted: true)
        ])

    static func host(_ folder: String) async throws -> StateHost {
        try await StateHost(
            objects: [list],
            configuration: HostConfiguration(
                name: "list", controlEndpoint: "ipc://\(folder)/control", heartbeatInterval: .milliseconds(200),
                persistence: .file("\(folder)/list.sqlite")))
    }

    static func titles(_ value: Value?) -> [String] {
        guard case .list(let items)? = value else { return [] }
        return items.map { item in
            if case .string(let title)? = item[["title"]] { return title }
            return "?"
        }
    }

    @Test("edits, inserts, moves and removals are stored element by element and come back in order after a restart")
    func elementRowsSurviveARestart() async throws {
        let folder = Fixtures.temporaryFolder()
        let path = "\(folder)/list.sqlite"
        var host = try await Self.host(folder)
        // The first write stores every element, one row each; the collection has no blob row.
        _ = try await host.applyDurably([PropertyChange("items", at: [.id(.string("i4")), "title"], to: "four")], to: "List")
        var counts = try SQLitePropertyStore(path: path, readOnly: true).rowCountsForTesting()
        #expect(counts.elements == 10 && counts.properties == 0, "\(counts)")
        // Then each operation touches the rows of its own elements.
        let inserted: Value = .map(["id": .string("new"), "title": .string("inserted")])
        _ = try await host.applyDurably([PropertyChange("items", .insert, element: inserted, position: 2)], to: "List")
        _ = try await host.applyDurably([PropertyChange("items", .move, at: [.id(.string("i0"))], position: 10)], to: "List")
        _ = try await host.applyDurably([PropertyChange("items", .remove, at: [.id(.string("i7"))])], to: "List")
        _ = try await host.applyDurably(
            [PropertyChange("items", .insert, element: .map(["id": .string("end"), "title": .string("last")]), position: 99)], to: "List")
        counts = try SQLitePropertyStore(path: path, readOnly: true).rowCountsForTesting()
        #expect(counts.elements == 11, "\(counts)")
        let expected = Self.titles(host.value(of: "items", in: "List"))
        #expect(expected == ["item 1", "inserted", "item 2", "item 3", "four", "item 5", "item 6", "item 8", "item 9", "item 0", "last"])
        host.stop()

        host = try await Self.host(folder)
        defer { host.stop() }
        #expect(Self.titles(host.value(of: "items", in: "List")) == expected, "the restarted host's list, in the stored order")
    }

    @Test("the rows a write needs: one for an edited element, one between its neighbours for an insert or a move, one deletion")
    func rowsPerOperation() throws {
        let items: [Value] = (0..<5).map { .map(["id": .string("i\($0)"), "title": .string("t\($0)")]) }
        let positions = Dictionary(uniqueKeysWithValues: (0..<5).map { (Value.string("i\($0)"), Double($0)) })
        var edited = items
        edited[3] = .map(["id": .string("i3"), "title": .string("changed")])
        let edit = HostPersistence.elementRows(from: .list(items), positions: positions, to: .list(edited))
        #expect(edit.0 == [.upsert(id: .string("i3"), position: 3, value: edited[3])])

        var inserted = items
        let new: Value = .map(["id": .string("x"), "title": .string("new")])
        inserted.insert(new, at: 2)
        let insert = HostPersistence.elementRows(from: .list(items), positions: positions, to: .list(inserted))
        #expect(insert.0 == [.upsert(id: .string("x"), position: 1.5, value: new)])

        let removed = Array(items.dropFirst())
        let remove = HostPersistence.elementRows(from: .list(items), positions: positions, to: .list(removed))
        #expect(remove.0 == [.delete(id: .string("i0"))])

        // Nothing stored element by element yet: every element, in order.
        let first = HostPersistence.elementRows(from: .list(items), positions: nil, to: .list(edited))
        #expect(first.0 == [.replaceAll(edited)])
    }
}
