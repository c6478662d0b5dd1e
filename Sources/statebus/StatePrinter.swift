import StateBus
import StateBusCommandLine
import StateBusWire

/// Prints a replica's state when it differs from what was printed last, so the value and
/// position observers of `statebus watch` never print the same state twice.
struct StatePrinter: Sendable {
    let replica: Replica
    let json: Bool
    private let shown = LastShown<PrintedPosition>()

    /// A replica's position and values: what two prints must differ in.
    struct PrintedPosition: Equatable, Sendable {
        let epoch: UInt64
        let sequence: UInt64
        let values: [String: Value]
    }

    /// - Parameters:
    ///   - replica: the replica whose state is printed.
    ///   - json: one JSON object per print instead of one line per property.
    init(replica: Replica, json: Bool) {
        self.replica = replica
        self.json = json
    }

    /// Prints the state if it changed since the last print (or always, with `force`).
    func printIfChanged(force: Bool = false) {
        let state = replica.consistentState
        shown.showIfChanged(PrintedPosition(epoch: state.epoch, sequence: state.sequence, values: state.values), force: force) { _ in
            Self.printState(of: replica, json: json)
        }
    }

    /// Prints a replica's state: one JSON object, or one line per property. `statebus dump`
    /// prints once through this; `statebus watch` at every change.
    static func printState(of replica: Replica, json: Bool) {
        // One consistent read: the position and the values of the same moment.
        let state = replica.consistentState
        if json {
            emit(
                #"{"connection":"\#(state.connection)","epoch":\#(state.epoch),"object":\#(ValueText.json(.string(replica.object))),"sequence":\#(state.sequence),"values":\#(ValueText.json(state.values))}"#
            )
        } else {
            emit("\(replica.object) @ sequence \(state.sequence) (\(state.connection))")
            for name in state.values.keys.sorted() { emit("  \(name) = \(state.values[name] ?? .null)") }
        }
    }
}
