import StateBusWire

extension AppliedBatch {
    /// The batch as it travels in a version-1 publication.
    func wire(epoch: UInt64, definition: ObjectDefinition) -> Statebus_V1_UpdateBatch {
        var batch = Statebus_V1_UpdateBatch()
        batch.object = object
        batch.epoch = epoch
        batch.sequence = sequence
        batch.origin = origin ?? ""
        batch.writeID = writeID
        batch.changes = ObjectStore.wireChanges(changes, of: definition)
        return batch
    }
}

extension AppliedBatch {
    /// A version-1 publication of consecutive batches of one object.
    /// - Parameters:
    ///   - batches: the batches, in sequence order.
    ///   - epoch: the host's epoch.
    ///   - definition: the object's definition (its property names).
    ///   - undurable: whether a batch's write failed its commit: it travels without its
    ///     origin, so its view does not take it for the echo of its write.
    static func version1Publication(
        _ batches: ArraySlice<AppliedBatch>, epoch: UInt64, definition: ObjectDefinition, undurable: (AppliedBatch) -> Bool
    ) throws -> [UInt8] {
        var publication = Statebus_V1_Publication()
        publication.protocolVersion = StateBusProtocol.version1
        publication.updates = batches.map { batch in
            var wire = batch.wire(epoch: epoch, definition: definition)
            if undurable(batch) {
                wire.origin = ""
                wire.writeID = 0
            }
            return wire
        }
        return try publication.serializedBytes()
    }
}

extension DecodedRun {
    /// The run's batches each encoded as a version-1 `UpdateBatch`, for a relay's version-1
    /// views: changes named by `names` (the object's property names, by index).
    func version1Batches(object: String, names: [String]) throws -> [[UInt8]] {
        try batches.map { batch, changes in
            var wire = Statebus_V1_UpdateBatch()
            wire.object = object
            wire.epoch = epoch
            wire.sequence = batch.sequence
            wire.origin = batch.origin ?? ""
            wire.writeID = batch.writeID
            wire.changes = changes.map { change in
                var item = Statebus_V1_Change()
                item.property = change.property < names.count ? names[change.property] : ""
                item.path = change.path.wire
                item.value = change.value.wire
                item.operation = change.operation.wire
                item.position = UInt32(clamping: change.position)
                return item
            }
            return try wire.serializedBytes()
        }
    }
}
