import StateBusWire

extension PropertyChange {
    init(wire: Statebus_V1_Change) {
        self.init(
            wire.property, at: ValuePath(wire: wire.path), to: Value(wire: wire.value),
            expectedVersion: wire.hasExpectedVersion ? wire.expectedVersion : nil
        )
    }

    var wire: Statebus_V1_Change {
        var wire = Statebus_V1_Change()
        wire.property = property
        wire.path = path.wire
        wire.value = value.wire
        if let expectedVersion { wire.expectedVersion = expectedVersion }
        return wire
    }
}
