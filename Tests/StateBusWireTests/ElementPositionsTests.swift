import StateBusWire
import Testing

/// A keyed collection's element: a map with an `"id"` field, as `IdentifiedArray` encodes.
private func element(_ id: Int, _ title: String) -> Value {
    .map(["id": .int(Int64(id)), "title": .string(title), "tags": .list([.string("t")])])
}

@Suite("Keyed collections: element operations in place, through element positions")
struct ElementPositionsTests {
    @Test("3,000 random operations give the list applying(_:_:at:position:) gives, and the positions stay those of the list")
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
                if inPlace.applyElementOperation(operation, value, at: path, position: position, positions: &positions) {
                    fastOperations += 1
                    #expect(expected != nil, "seed \(seed) step \(step): applied in place, but applying refuses it")
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
        #expect(value.applyElementOperation(.replace, .string("changed"), at: [.id(.int(5_000)), "title"], position: 0, positions: &positions))
        #expect(value.applyElementOperation(.replace, .string("again"), at: [.id(.int(9_999)), "title"], position: 0, positions: &positions))
        #expect(storage(value) == before)
        #expect(value[[.index(5_000), "title"]] == .string("changed"))
        #expect(value[[.index(9_999), "title"]] == .string("again"))
        #expect(positions?.position(of: .int(9_999)) == 9_999)
    }
}
