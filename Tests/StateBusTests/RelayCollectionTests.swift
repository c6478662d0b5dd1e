import Foundation
import IdentifiedCollections
import StateBus
import Testing

private struct Card: Codable, Identifiable, Sendable {
    var id: Int
    var title: String
}

/// A keyed collection's element operations, applied in place by the host, each relay and
/// each view (found through their element positions), checked against the host's value.
@Suite("Keyed collections through a relay")
struct RelayCollectionTests {
    @Test(
        "400 element operations (edits, inserts at the end and between, removals, moves, whole values) leave every copy as the host holds it, the relay's too"
    )
    func copiesFollowTheHost() async throws {
        let folder = Fixtures.temporaryFolder()
        let board = ObjectDefinition(
            "Board",
            properties: [
                PropertyDefinition("cards", default: IdentifiedArrayOf<Card>(uniqueElements: (0..<200).map { Card(id: $0, title: "card \($0)") }))
            ])
        let host = try await StateHost(
            objects: [board], configuration: HostConfiguration(name: "board", controlEndpoint: "ipc://\(folder)/board", persistence: .disabled))
        defer { host.stop() }
        // Patient, all three: the counts of snapshots below are about runs applied right, and
        // a slow machine (ThreadSanitizer) must not make any of them join again for silence.
        let relay = try await StateRelayTests.relay(of: host, folder: folder, patient: true)
        defer { relay.stop() }
        let patient = ReplicaConfiguration(missedHeartbeatsBeforeStale: 1_000, requestTimeout: .seconds(120))
        let relayed = try Replica(object: "Board", controlEndpoint: relay.controlEndpoint, configuration: patient)
        defer { relayed.close() }
        let direct = try Replica(object: "Board", controlEndpoint: host.controlEndpoint, configuration: patient)
        defer { direct.close() }
        try await relayed.waitUntilLive(timeout: .seconds(20))
        try await direct.waitUntilLive(timeout: .seconds(20))
        let snapshotsBefore = relay.statistics.upstreamSnapshots

        var nextID = 1_000
        for step in 0..<400 {
            guard case .list(let cards)? = host.value(of: "cards", in: "Board"), let some = cards.randomElement()?.elementID else {
                Issue.record("step \(step): the host holds no list")
                return
            }
            let change: PropertyChange
            switch step % 8 {
            case 0, 1, 2: change = PropertyChange("cards", at: [.id(some), "title"], to: .string("edit \(step)"))
            case 3:
                nextID += 1
                change = PropertyChange("cards", .insert, element: ["id": .int(Int64(nextID)), "title": "appended"], position: cards.count)
            case 4:
                nextID += 1
                change = PropertyChange("cards", .insert, element: ["id": .int(Int64(nextID)), "title": "between"], position: step % cards.count)
            case 5: change = PropertyChange("cards", .remove, at: [.id(some)])
            case 6: change = PropertyChange("cards", .move, at: [.id(some)], position: (step * 7) % cards.count)
            default:
                // Now and then the whole list, which drops every holder's positions.
                change =
                    step % 40 == 7
                    ? PropertyChange("cards", to: .list(Array(cards.reversed())))
                    : PropertyChange("cards", at: [.id(some), "title"], to: .string("again \(step)"))
            }
            _ = try host.apply([change], to: "Board")
        }
        let last = host.sequence(of: "Board") ?? 0
        try await relayed.waitFor(timeout: .seconds(30), "the view behind the relay to apply sequence \(last)") { $0.sequence >= last }
        try await direct.waitFor(timeout: .seconds(30), "the view on the host to apply sequence \(last)") { $0.sequence >= last }
        let truth = host.value(of: "cards", in: "Board")
        #expect(relayed.values["cards"] == truth, "the view behind the relay differs from the host")
        #expect(direct.values["cards"] == truth, "the view on the host differs from the host")
        // A view joining the relay now takes its snapshot from the relay's own copy, which
        // applied every run itself.
        let late = try Replica(object: "Board", controlEndpoint: relay.controlEndpoint)
        defer { late.close() }
        try await late.waitUntilLive(timeout: .seconds(20))
        try await late.waitFor(timeout: .seconds(30), "the late view to reach sequence \(last)") { $0.sequence >= last }
        #expect(late.values["cards"] == truth, "the relay's copy, as a late view got it, differs from the host")
        // Every run applied as it came: a copy that went wrong would have taken a new snapshot.
        #expect(relay.statistics.upstreamSnapshots == snapshotsBefore)
        #expect(relayed.statistics.appliedSnapshots == 1 && direct.statistics.appliedSnapshots == 1)
    }
}
