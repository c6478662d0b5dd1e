import IdentifiedCollections
import PropertyBased
import StateBusWire
import Testing

@testable import StateBus

private struct Card: Codable, Identifiable, Sendable {
    var id: Int
    var title: String
    var done: Bool
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
            // Seeded: a failure names a sequence that reproduces.
            var numbers = Xoshiro(seed: (seed, 0x9E37_79B9_7F4A_7C15, seed, 1))
            var store = ObjectStore(definition: Self.definition)
            var reference = store
            var inPlace = 0
            for step in 0..<1_500 {
                let property = ["cards", "cards", "cards", "cards", "locked", "checked"][Int.random(in: 0..<6, using: &numbers)]
                let id = Value.int(Int64(Int.random(in: 0..<45, using: &numbers)))
                var change: PropertyChange =
                    switch Int.random(in: 0..<10, using: &numbers) {
                    case 0:
                        PropertyChange(
                            property, at: [.id(id), "title"], to: .string(Int.random(in: 0..<8, using: &numbers) == 0 ? "forbidden" : "title \(step)")
                        )
                    case 1:
                        PropertyChange(
                            property, at: [.id(id), "done"], to: Int.random(in: 0..<4, using: &numbers) == 0 ? .string("not a Bool") : .bool(true))
                    case 2: PropertyChange(property, at: [.id(id)], to: Self.card(Int.random(in: 0..<45, using: &numbers), "whole \(step)"))
                    case 3: PropertyChange(property, at: [.id(id), "unknown"], to: .int(1))  // a key the element type drops
                    case 4, 5:
                        PropertyChange(
                            property, .insert, element: Self.card(30 + Int.random(in: 0..<40, using: &numbers), "new \(step)"),
                            position: Int.random(in: 0..<40, using: &numbers) - 3)
                    case 6: PropertyChange(property, .insert, element: .map(["title": .string("no id")]))
                    case 7: PropertyChange(property, .remove, at: [.id(id)])
                    case 8: PropertyChange(property, .move, at: [.id(id)], position: Int.random(in: 0..<40, using: &numbers) - 3)
                    default: PropertyChange(property, at: [.index(Int.random(in: 0..<40, using: &numbers)), "title"], to: .string("by index"))
                    }
                if Int.random(in: 0..<10, using: &numbers) == 0 { change.expectedVersion = UInt64(Int.random(in: 0..<3, using: &numbers)) }
                let fromView = Int.random(in: 0..<4, using: &numbers) != 0
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
