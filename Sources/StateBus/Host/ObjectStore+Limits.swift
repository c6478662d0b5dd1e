extension ObjectStore {
    /// Checks resolved changes against the size bounds: each new property value, the whole
    /// write, and the object as it would be after the write.
    ///
    /// Path writes are measured by the whole property they produce, so adding keys to a map
    /// one path write at a time stops at ``HostLimits/maxPropertyBytes`` as a whole value does.
    /// - Throws: `tooLarge`, naming the property, its size and the bound.
    func checkSizes(of resolved: [Resolved], limits: HostLimits) throws(StateBusError) {
        let object = definition.name
        var newSizes: [String: Int] = [:]
        var writeBytes = 0
        for item in resolved {
            let property = item.change.property
            let size = item.size
            if size > limits.maxPropertyBytes {
                throw StateBusError(
                    .tooLarge,
                    "'\(property)' would be \(size) bytes encoded; this host allows at most \(limits.maxPropertyBytes) bytes per property (HostLimits.maxPropertyBytes): write a smaller value, or split it over several properties",
                    object: object, property: property)
            }
            newSizes[property] = size
            writeBytes += item.change.replacesWholeValue ? size : item.change.value.encodedSizeBound
        }
        if writeBytes > limits.maxObjectBytes {
            throw StateBusError(
                .tooLarge,
                "the write's changes are \(writeBytes) bytes encoded; this host allows at most \(limits.maxObjectBytes) bytes per write and per object (HostLimits.maxObjectBytes): send fewer changes per write",
                object: object)
        }
        var total = totalBytes
        for (property, size) in newSizes { total += size - sizes[property, default: 0] }
        if total > limits.maxObjectBytes, let largest = newSizes.max(by: { $0.value < $1.value }) {
            throw StateBusError(
                .tooLarge,
                "the object would be \(total) bytes encoded after this write ('\(largest.key)' would be \(largest.value) bytes); this host allows at most \(limits.maxObjectBytes) bytes per object (HostLimits.maxObjectBytes): make other properties smaller first",
                object: object, property: largest.key)
        }
    }
}
