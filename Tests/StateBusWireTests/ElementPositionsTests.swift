import StateBusWire
import Testing

/// A keyed collection's element: a map with an `"id"` field, as `IdentifiedArray` encodes.
private func element(_ id: Int, _ title: String) -> Value {
    .map(["id": .int(Int64(id)), "title": .string(title), "tags": .list([.string("t")])])
}

@Suite("Keyed collections: element operations in place, through element positions")
struct ElementPositionsTests {
    @Test(
        "3,000 random operations give the list applying(_:_:at:position:) gives, the positions stay those of the list, and each reported edit repeats it"
    )
    func sameAsApplying() throws {
        for seed in [1, 2, 3] as [UInt64] {
            // Seeded: a failure names a sequence that reproduces.
            var numbers = SplitMix(state: seed)
            // Ids 0..<40 with 7 twice: a repeated id names its first element, both ways.
            var reference: Value = .list((0..<40).map { element($0, "item \($0)") } + [element(7, "second seven")])
            var inPlace = reference
            var positions: ElementPositions?
            var fastOperations = 0
            for step in 0..<1_000 {
                let id = Value.int(Int64(Int.random(in: 0..<60, using: &numbers)))  // a third of them not in the list
                let (operation, value, path): (ElementOperation, Value, ValuePath) =
                    switch Int.random(in: 0..<8, using: &numbers) {
                    case 0: (.replace, .string("title \(step)"), [.id(id), "title"])
                    // The same id, or another (refused).
                    case 1: (.replace, element(Int.random(in: 0..<60, using: &numbers), "whole \(step)"), [.id(id)])
                    case 2: (.replace, .string("x"), [.id(id), "missing", "deeper"])  // leads nowhere: refused
                    case 3: (.insert, element(Int.random(in: 0..<80, using: &numbers), "new \(step)"), .root)  // a duplicate id is refused
                    case 4: (.insert, .map(["title": .string("no id")]), .root)
                    case 5: (.remove, .null, [.id(id)])
                    case 6: (.move, .null, [.id(id)])
                    default: (.replace, .string("by index"), [.index(0), "title"])  // not an element operation by id
                    }
                let position = Int.random(in: 0..<50, using: &numbers) - 5  // before the start and past the end too
                let expected = try? reference.applying(operation, value, at: path, position: position)
                let before = inPlace
                if let edit = inPlace.applyElementOperation(operation, value, at: path, position: position, positions: &positions) {
                    fastOperations += 1
                    #expect(expected != nil, "seed \(seed) step \(step): applied in place, but applying refuses it")
                    // The edit it reports, repeated on the list before, gives the same list.
                    var repeated = before
                    let fits = repeated.applyElementEdit(edit)
                    #expect(fits, "seed \(seed) step \(step): \(edit) does not fit the list before")
                    #expect(repeated == inPlace, "seed \(seed) step \(step): \(edit) repeated differs from \(operation) at \(path)")
                } else {
                    #expect(inPlace == before, "seed \(seed) step \(step): declined, yet changed the list")
                    if let updated = try? inPlace.applying(operation, value, at: path, position: position) {
                        inPlace = updated
                        positions = nil  // the holder's part: any other change drops them
                    }
                }
                if let expected { reference = expected }
                #expect(inPlace == reference, "seed \(seed) step \(step): \(operation) at \(path)")
                guard inPlace == reference else { return }
                if let positions, case .list(let items) = inPlace {
                    let fresh = ElementPositions(of: items)
                    for id in items.compactMap(\.elementID) where positions.position(of: id) != fresh.position(of: id) {
                        Issue.record(
                            "seed \(seed) step \(step): id \(id) kept at \(String(describing: positions.position(of: id))), is at \(String(describing: fresh.position(of: id)))"
                        )
                    }
                }
            }
            // The run went through the positions most of the time, not only the general way.
            #expect(fastOperations > 300, "seed \(seed): \(fastOperations) operations in place")
        }
    }

    @Test("a change inside an element changes the list where it is: the list is not copied")
    func changesInPlace() throws {
        var value: Value = .list((0..<10_000).map { element($0, "item \($0)") })
        var positions: ElementPositions?
        func storage(_ value: Value) -> UnsafeRawPointer? {
            guard case .list(let items) = value else { return nil }
            return items.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
        }
        let before = storage(value)
        #expect(value.applyElementOperation(.replace, .string("changed"), at: [.id(.int(5_000)), "title"], position: 0, positions: &positions) != nil)
        #expect(value.applyElementOperation(.replace, .string("again"), at: [.id(.int(9_999)), "title"], position: 0, positions: &positions) != nil)
        #expect(storage(value) == before)
        #expect(value[[.index(5_000), "title"]] == .string("changed"))
        #expect(value[[.index(9_999), "title"]] == .string("again"))
        #expect(positions?.position(of: .int(9_999)) == 9_999)
    }
}

@Suite("Element edits repeated on another copy of a list")
struct ElementEditTests {
    @Test("an edit outside the list, or on a value that is not a list, changes nothing and says so")
    func editsThatDoNotFit() {
        let list: Value = .list([element(1, "one"), element(2, "two")])
        for edit in [
            ElementEdit.replaced(index: 2, element: element(3, "three")), .replaced(index: -1, element: element(3, "x")),
            .inserted(index: 3, element: element(3, "three")), .removed(index: 2), .moved(from: 0, to: 2), .moved(from: 5, to: 0)
        ] {
            var copy = list
            let fits = copy.applyElementEdit(edit)
            #expect(!fits, "\(edit)")
            #expect(copy == list, "\(edit)")
        }
        var text: Value = "not a list"
        let fits = text.applyElementEdit(.removed(index: 0))
        #expect(!fits)
        #expect(text == "not a list")
    }
}
