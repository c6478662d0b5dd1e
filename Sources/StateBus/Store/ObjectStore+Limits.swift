extension ObjectStore {
    /// ``checkSizes(of:limits:)`` for a batch of one change, without lists.
    func checkSize(of item: Resolved, limits: HostLimits) throws(StateBusError) {
        try checkPropertySize(item, limits: limits)
        let writeBytes = item.change.replacesWholeValue ? item.size : item.change.value.encodedSizeBound
        let total = totalBytes + item.size - sizes[item.property]
        guard writeBytes <= limits.maxObjectBytes, total <= limits.maxObjectBytes else {
            return try checkSizes(of: [item], limits: limits)  // which says what is too large
        }
    }

    /// Refuses a value nested deeper than every message that carries it can hold
    /// (``Value/maximumNestingDepth``); `levelsAbove` counts the messages between the
    /// property's value and this one (2 for an element of a keyed collection).
    static func checkNesting(of value: Value, levelsAbove: Int = 0, object: String, property: String) throws(StateBusError) {
        guard value.nests(deeperThan: Value.maximumNestingDepth - levelsAbove) else { return }
        throw tooDeep(object: object, property: property)
    }

    /// ``checkNesting(of:levelsAbove:object:property:)`` for a property's whole value, in
    /// the same walk that finds its ``Value/encodedSizeBound``.
    /// - Returns: the value's `encodedSizeBound`.
    static func sizeCheckingNesting(of value: Value, object: String, property: String) throws(StateBusError) -> Int {
        guard let size = value.encodedSizeBound(nestingAtMost: Value.maximumNestingDepth) else { throw tooDeep(object: object, property: property) }
        return size
    }

    private static func tooDeep(object: String, property: String) -> StateBusError {
        StateBusError(
            .tooLarge,
            "'\(property)' would nest more than \(Value.maximumNestingDepth) protobuf messages deep (a list level counts 2, a map level 3), deeper than a view can decode: write a shallower value",
            object: object, property: property)
    }

    private func checkPropertySize(_ item: Resolved, limits: HostLimits) throws(StateBusError) {
        guard item.size > limits.maxPropertyBytes else { return }
        throw StateBusError(
            .tooLarge,
            "'\(item.change.property)' would be \(item.size) bytes encoded; this host allows at most \(limits.maxPropertyBytes) bytes per property (HostLimits.maxPropertyBytes): write a smaller value, or split it over several properties",
            object: definition.name, property: item.change.property)
    }

    /// Checks resolved changes against the size bounds: each new property value, the whole
    /// write, and the object as it would be after the write.
    ///
    /// Path writes are measured by the whole property they produce, so adding keys to a map
    /// one path write at a time stops at ``HostLimits/maxPropertyBytes`` as a whole value does.
    /// - Throws: `tooLarge`, naming the property, its size and the bound.
    func checkSizes(of resolved: [Resolved], limits: HostLimits) throws(StateBusError) {
        let object = definition.name
        var writeBytes = 0
        var total = totalBytes
        // A batch changes few properties: a list searched from its end beats a dictionary.
        var newSizes: [(property: Int, size: Int)] = []
        newSizes.reserveCapacity(resolved.count)
        for item in resolved {
            let size = item.size
            try checkPropertySize(item, limits: limits)
            let before = newSizes.last { $0.property == item.property }?.size ?? sizes[item.property]
            total += size - before
            newSizes.append((item.property, size))
            writeBytes += item.change.replacesWholeValue ? size : item.change.value.encodedSizeBound
        }
        if writeBytes > limits.maxObjectBytes {
            throw StateBusError(
                .tooLarge,
                "the write's changes are \(writeBytes) bytes encoded; this host allows at most \(limits.maxObjectBytes) bytes per write and per object (HostLimits.maxObjectBytes): send fewer changes per write",
                object: object)
        }
        if total > limits.maxObjectBytes, let largest = newSizes.max(by: { $0.size < $1.size }) {
            let name = definition.properties[largest.property].name
            throw StateBusError(
                .tooLarge,
                "the object would be \(total) bytes encoded after this write ('\(name)' would be \(largest.size) bytes); this host allows at most \(limits.maxObjectBytes) bytes per object (HostLimits.maxObjectBytes): make other properties smaller first",
                object: object, property: name)
        }
    }
}
