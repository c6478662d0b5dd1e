import StateBusWire

extension AppliedBatch {
    /// An upper bound of the batch's encoded size, for splitting publications by bytes
    /// (``HostLimits/maxPublicationBytes``) without encoding twice.
    var encodedSizeBound: Int {
        changes.reduce(64 + object.utf8.count + (origin?.utf8.count ?? 0)) { total, item in
            let value =
                item.change.replacesWholeValue
                ? item.newValue
                : item.change.operation == .replace ? (item.part ?? item.newValue[item.change.path] ?? item.change.value) : item.change.value
            return total + 16 + item.change.property.utf8.count + item.change.path.description.utf8.count + value.encodedSizeBound
        }
    }
}
