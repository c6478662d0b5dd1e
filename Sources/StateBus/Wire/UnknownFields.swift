import StateBusWire

// Fields a host does not know, anywhere in a request: a client built for a newer schema. A
// `Value` carrying only an unknown field (a future kind) would otherwise read as null, so a
// host refuses such a request rather than store something else than was sent.

extension Statebus_V1_Value {
    /// Whether this value, or any value nested in it, has fields this host does not know (or
    /// no kind at all while it carries unknown fields).
    var carriesUnknownFields: Bool {
        if !unknownFields.data.isEmpty { return true }
        switch kind {
        case .listValue(let list): return !list.unknownFields.data.isEmpty || list.items.contains(where: \.carriesUnknownFields)
        case .mapValue(let map): return !map.unknownFields.data.isEmpty || map.entries.values.contains(where: \.carriesUnknownFields)
        default: return false
        }
    }
}

extension Statebus_V1_Change {
    /// Whether the change, its path or its value has fields this host does not know, or an
    /// element operation this host does not know.
    var carriesUnknownFields: Bool {
        if !unknownFields.data.isEmpty || value.carriesUnknownFields { return true }
        if case .UNRECOGNIZED = operation { return true }
        return path.contains {
            !$0.unknownFields.data.isEmpty || (($0.step.map { if case .id(let id) = $0 { id.carriesUnknownFields } else { false } }) ?? false)
        }
    }
}
