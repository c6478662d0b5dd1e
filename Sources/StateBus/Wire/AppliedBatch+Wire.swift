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
