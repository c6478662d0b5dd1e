import PropertyBased
import StateBusWire
import Testing

/// A keyed collection's element: a map with an `"id"` field, as `IdentifiedArray` encodes.
private func item(_ id: String, _ title: String, done: Bool = false) -> Value {
    .map(["id": .string(id), "title": .string(title), "done": .bool(done)])
}

@Suite("Keyed collections: element operations and the changes between two lists")
struct ElementOperationTests {
    let list: Value = .list([item("a", "one"), item("b", "two"), item("c", "three")])

    @Test("insert, remove, move and replace address elements by id; an id names the same element wherever it moves")
    func operations() throws {
        let inserted = try list.applying(.insert, item("d", "four"), at: .root, position: 1)
        #expect(inserted[[.index(1), "id"]] == .string("d"))
        #expect(try inserted.applying(.insert, item("e", "past the end"), at: .root, position: 99)[[.index(4), "id"]] == .string("e"))
        let moved = try inserted.applying(.move, .null, at: [.id(.string("c"))], position: 0)
        #expect(moved[[.index(0), "title"]] == .string("three"))
        let edited = try moved.applying(.replace, .bool(true), at: [.id(.string("a")), "done"], position: 0)
        #expect(edited[[.id(.string("a")), "done"]] == .bool(true))
        let removed = try edited.applying(.remove, .null, at: [.id(.string("b"))], position: 0)
        guard case .list(let items) = removed else { throw ValuePathError(path: "", reason: "not a list") }
        #expect(items.compactMap(\.elementID) == [.string("c"), .string("a"), .string("d")])
    }

    @Test("an operation on an element that is gone, a duplicate id, or a changed id is refused, saying why")
    func refusals() {
        let gone = #expect(throws: ValuePathError.self) { try list.applying(.replace, .string("x"), at: [.id(.string("zz")), "title"], position: 0) }
        #expect(gone?.reason.contains(#"no element with id "zz" (another writer may have removed it)"#) == true, "\(String(describing: gone))")
        let duplicate = #expect(throws: ValuePathError.self) { try list.applying(.insert, item("b", "again"), at: .root, position: 0) }
        #expect(duplicate?.reason.contains("already in the list") == true)
        let renamed = #expect(throws: ValuePathError.self) { try list.applying(.replace, .string("q"), at: [.id(.string("a")), "id"], position: 0) }
        #expect(renamed?.reason.contains("keeps its id") == true)
        #expect(throws: ValuePathError.self) { try list.applying(.remove, .null, at: .root, position: 0) }
    }

    @Test("paths with element ids print and parse: todos[id=\"a1\"].done, todos[id=7]")
    func pathText() throws {
        let path: ValuePath = ["todos", .id(.string("a1")), "done"]
        #expect(path.description == #"todos[id="a1"].done"#)
        #expect(try ValuePath(parsing: #"todos[id="a1"].done"#) == path)
        #expect(try ValuePath(parsing: "todos[id=7]") == ["todos", .id(.int(7))])
        #expect(throws: ValuePathError.self) { try ValuePath(parsing: "todos[id=]") }
    }

    @Test("one element edited in a large list is one operation carrying that element's part, not the list")
    func oneEditInALargeList() throws {
        let before = Value.list((0..<10_000).map { item("i\($0)", "item \($0)") })
        guard case .list(var items) = before else { return }
        items[5_000] = item("i5000", "edited")
        let changes = try #require(before.elementChanges(to: .list(items)))
        #expect(changes == [ElementChange(operation: .replace, path: [.id(.string("i5000")), "title"], value: .string("edited"), position: 0)])
    }

    @Test("random edits of a list (inserts, removals, moves, edits) turn into element operations that rebuild it exactly")
    func randomEdits() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var generator = SplitMix(state: UInt64(seed))
            let size = Int(generator.next() % 16)
            var items = (0..<size).map { item("i\($0)", "item \($0)") }
            let before = Value.list(items)
            var next = size
            for _ in 0..<Int(generator.next() % 4 + 1) {
                switch generator.next() % 4 {
                case 0:
                    items.insert(item("i\(next)", "new"), at: Int(generator.next() % UInt64(items.count + 1)))
                    next += 1
                case 1 where !items.isEmpty: items.remove(at: Int(generator.next() % UInt64(items.count)))
                case 2 where items.count > 1:
                    let element = items.remove(at: Int(generator.next() % UInt64(items.count)))
                    items.insert(element, at: Int(generator.next() % UInt64(items.count + 1)))
                case 3 where !items.isEmpty:
                    let index = Int(generator.next() % UInt64(items.count))
                    items[index] = .map(["id": items[index].elementID!, "title": .string("edited \(generator.next() % 100)"), "done": .bool(true)])
                default: break
                }
            }
            let after = Value.list(items)
            let changes = before.elementChanges(to: after)
            // Each of the (at most 4) edits costs at most one operation, so a list of 8 or
            // more is never replaced whole.
            if items.count >= 8 { #expect(changes != nil, "seed \(seed): replaced whole") }
            guard let changes else { return }
            var rebuilt = before
            recordingErrors {
                for change in changes { rebuilt = try rebuilt.applying(change.operation, change.value, at: change.path, position: change.position) }
            }
            #expect(rebuilt == after, "seed \(seed): \(changes)")
            #expect(
                changes.allSatisfy { $0.operation != .replace || $0.path.components.first.map { if case .id = $0 { true } else { false } } == true })
        }
    }
}
