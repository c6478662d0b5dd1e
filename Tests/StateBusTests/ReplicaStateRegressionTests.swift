import StateBusWire
import Testing

@testable import StateBus

/// Cases the property tests of ``ReplicaState`` found, kept as plain tests.
@Suite("ReplicaState: cases found by the property tests")
struct ReplicaStateRegressionTests {
    @Test("a write accepted twice (its copy answered at a later sequence) survives a snapshot between the two")
    func acceptedTwiceSurvivesEarlierSnapshot() {
        var state = ReplicaState()
        _ = state.localWrite(id: 1, changes: [PropertyChange("a", to: 0)])
        _ = state.accept(writeID: 1, sequence: 1)
        _ = state.accept(writeID: 1, sequence: 2)
        _ = state.applySnapshot(epoch: 0, sequence: 1, values: ["a": 1, "b": 2], versions: ["a": 1, "b": 1])
        #expect(state.pending.map(\.id) == [1])
        #expect(state.visibleValue(of: "a") == 0)
    }
}
