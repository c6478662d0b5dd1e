extension PropertyChange {
    package init(wire: Statebus_V1_Change) {
        self.init(
            wire.property, at: ValuePath(wire: wire.path), to: Value(wire: wire.value),
            expectedVersion: wire.hasExpectedVersion ? wire.expectedVersion : nil
        )
        operation = ElementOperation(wire: wire.operation)
        position = Int(wire.position)
    }

    package var wire: Statebus_V1_Change {
        var wire = Statebus_V1_Change()
        wire.property = property
        wire.path = path.wire
        wire.value = value.wire
        if let expectedVersion { wire.expectedVersion = expectedVersion }
        wire.operation = operation.wire
        wire.position = UInt32(clamping: position)
        return wire
    }
}

extension ElementOperation {
    /// An operation on the wire; an unknown one (a newer client's) reads as `replace`, which
    /// the host then refuses (the write has unknown fields) rather than guessing.
    package init(wire: Statebus_V1_ElementOperation) {
        switch wire {
        case .insert: self = .insert
        case .remove: self = .remove
        case .move: self = .move
        default: self = .replace
        }
    }

    package var wire: Statebus_V1_ElementOperation {
        switch self {
        case .replace: .replace
        case .insert: .insert
        case .remove: .remove
        case .move: .move
        }
    }
}
