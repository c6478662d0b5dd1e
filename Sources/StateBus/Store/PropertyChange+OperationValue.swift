import StateBusWire

extension PropertyChange {
    /// The name of this change's element operation when it is a `REMOVE` or a `MOVE` that
    /// carries a value other than null; `nil` otherwise.
    ///
    /// Those operations take no value: null is all they may carry, written any way protobuf
    /// allows (`value` absent, a `Value` with no field set, or `null_value`, which all read
    /// as null). Any other value is refused instead of ignored: input the host does not take
    /// is never silently dropped, so a client that meant something by it hears at once that
    /// it was not taken.
    var operationRefusingItsValue: String? {
        switch operation {
        case .remove: value == .null ? nil : "REMOVE"
        case .move: value == .null ? nil : "MOVE"
        case .replace, .insert: nil
        }
    }
}
