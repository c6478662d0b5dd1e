import IdentifiedCollections
import StateBusWire
import Testing

@testable import StateBus

private struct Card: Codable, Identifiable, Sendable {
    var id: Int
    var title: String
    var done: Bool
}

/// A small deterministic generator (SplitMix64), so a failure names a reproducible sequence.
private struct SeededNumbers {
    var state: UInt64
    mutating func next(below bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((mixed ^ (mixed >> 31)) % UInt64(bound))
    }
}

@Suite("The host's element operations in place")
struct ElementInPlaceTests {
    private static let definition = ObjectDefinition(
        "Board",
        properties: [
            PropertyDefinition(
                "cards", default: IdentifiedArrayOf<Card>(uniqueElements: (0..<30).map { Card(id: $0, title: "card \($0)", done: false) }),
                writable: true, validateElement: ElementValidator { (card: Card) in card.title == "forbidden" ? "no forbidden titles" : nil }),
            PropertyDefinition(
                "locked", default: IdentifiedArrayOf<Card>(uniqueElements: [Card(id: 1, title: "fixed", done: true)]), writable: false),
            PropertyDefinition(
                "checked", default: IdentifiedArrayOf<Card>(), writable: true,
                validate: { (cards: IdentifiedArrayOf<Card>) in cards.count > 3 ? "at most 3 cards" : nil })
        ])

    private static func card(_ id: Int, _ title: String) -> Value {
        .map(["id": .int(Int64(id)), "title": .string(title), "done": .bool(false)])
    }

    @Test(
        "4,500 random element operations end as the general way ends them: values, versions, sizes, refusals word for word, and what is published"
    )
    func sameAsTheGeneralWay() {
        // Small bounds, so inserts run into them and removals make room again.
        let limits = HostLimits(maxPropertyBytes: 4_500, maxObjectBytes: 7_000)
        for seed in [11, 12, 13] as [UInt64] {
            var numbers = SeededNumbers(state: seed)
            var store = ObjectStore(definition: Self.definition)
            var reference = store
            var inPlace = 0
            for step in 0..<1_500 {
                let property = ["cards", "cards", "cards", "cards", "locked", "checked"][numbers.next(below: 6)]
                let id = Value.int(Int64(numbers.next(below: 45)))
                var change: PropertyChange =
                    switch numbers.next(below: 10) {
                    case 0: PropertyChange(property, at: [.id(id), "title"], to: .string(numbers.next(below: 8) == 0 ? "forbidden" : "title \(step)"))
                    case 1: PropertyChange(property, at: [.id(id), "done"], to: numbers.next(below: 4) == 0 ? .string("not a Bool") : .bool(true))
                    case 2: PropertyChange(property, at: [.id(id)], to: Self.card(numbers.next(below: 45), "whole \(step)"))
                    case 3: PropertyChange(property, at: [.id(id), "unknown"], to: .int(1))  // a key the element type drops
                    case 4, 5:
                        PropertyChange(
                            property, .insert, element: Self.card(30 + numbers.next(below: 40), "new \(step)"), position: numbers.next(below: 40) - 3)
                    case 6: PropertyChange(property, .insert, element: .map(["title": .string("no id")]))
                    case 7: PropertyChange(property, .remove, at: [.id(id)])
                    case 8: PropertyChange(property, .move, at: [.id(id)], position: numbers.next(below: 40) - 3)
                    default: PropertyChange(property, at: [.index(numbers.next(below: 40)), "title"], to: .string("by index"))
                    }
                if numbers.next(below: 10) == 0 { change.expectedVersion = UInt64(numbers.next(below: 3)) }
                let fromView = numbers.next(below: 4) != 0
                let label = "seed \(seed) step \(step): \(change) from \(fromView ? "a view" : "the host")"

                let took = store.applyElementInPlace(change, fromView: fromView, limits: limits)
                let outcome: Result<(UInt64, ObjectStore.Resolved), StateBusError>
                if let took {
                    inPlace += 1
                    outcome = .success(took)
                } else {
                    outcome = Result { () throws(StateBusError) in try store.validateAndApply(change, fromView: fromView, limits: limits) }
                }
                let expected = Result { () throws(StateBusError) -> (UInt64, ObjectStore.Resolved) in
                    let resolved = try reference.validate(change, fromView: fromView, limits: limits)
                    return (reference.apply(resolved), resolved)
                }
                switch (outcome, expected) {
                case (.success(let got), .success(let want)):
                    #expect(got.0 == want.0, "\(label): sequence")
                    #expect(got.1.published == want.1.published, "\(label): published \(got.1.published) against \(want.1.published)")
                case (.failure(let got), .failure(let want)):
                    #expect(got.code == want.code && got.message == want.message, "\(label): \(got) against \(want)")
                default:
                    Issue.record("\(label): \(outcome) against \(expected)")
                }
                #expect(store.values == reference.values, "\(label): values")
                #expect(store.versions == reference.versions && store.sizes == reference.sizes, "\(label): versions or sizes")
                #expect(store.totalBytes == reference.totalBytes && store.sequence == reference.sequence, "\(label): totals")
                if store.values != reference.values { return }
            }
            #expect(inPlace > 100, "seed \(seed): \(inPlace) operations in place")
        }
    }
}
