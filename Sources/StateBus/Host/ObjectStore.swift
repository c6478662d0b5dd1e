import StateBusWire

/// The host's state of one object: values, per-property versions and the sequence number.
///
/// A value type, checked and changed under the host's lock; `validate` never changes it, so
/// a rejected write leaves no trace.
struct ObjectStore: Sendable {
    let definition: ObjectDefinition
    private(set) var values: [String: Value]
    private(set) var versions: [String: UInt64] = [:]
    private(set) var sequence: UInt64 = 0
    /// Each property's encoded size bound (``Value/encodedSizeBound``) and their sum, kept
    /// up to date so a write is checked against ``HostLimits`` without measuring the object.
    private(set) var sizes: [String: Int] = [:]
    private(set) var totalBytes = 0

    init(definition: ObjectDefinition, restored: [String: Value] = [:]) {
        self.definition = definition
        var values = definition.defaultValues
        for (name, value) in restored where values[name] != nil { values[name] = value }
        self.values = values
        for (name, value) in values { sizes[name] = value.encodedSizeBound }
        totalBytes = sizes.values.reduce(0, +)
    }

    /// A change resolved to a whole new property value, ready to apply.
    struct Resolved: Sendable {
        let change: PropertyChange
        let newValue: Value
        /// `newValue.encodedSizeBound`, found from the element's size alone for an element
        /// operation (walking a large collection for every element written would cost time
        /// in its size).
        let size: Int
    }

    /// Checks changes as one batch, without changing anything.
    /// - Parameters:
    ///   - changes: the changes, applied in order (later ones see earlier ones).
    ///   - fromView: whether a view wrote them: then read-only properties and validators apply.
    ///   - limits: the size bounds (see ``checkSizes(of:limits:)``).
    /// - Returns: the resolved changes.
    /// - Throws: `StateBusError` with the first reason the batch cannot apply.
    func validate(_ changes: [PropertyChange], fromView: Bool, limits: HostLimits = HostLimits()) throws(StateBusError) -> [Resolved] {
        let object = definition.name
        guard !changes.isEmpty else { throw StateBusError(.badRequest, "a write must change at least one property", object: object) }
        // Values set by earlier changes of this batch. Not a copy of `values`: changing a copy
        // would copy the whole dictionary, on every write.
        var working: [String: Value] = [:]
        var workingSizes: [String: Int] = [:]
        var resolved: [Resolved] = []
        resolved.reserveCapacity(changes.count)
        for change in changes {
            guard let property = definition.property(named: change.property) else {
                let known = definition.properties.map(\.name).joined(separator: ", ")
                throw StateBusError(.unknownProperty, "no property '\(change.property)'; known: \(known)", object: object, property: change.property)
            }
            if fromView && !property.isWritable {
                throw StateBusError(
                    .readOnly, "'\(property.name)' is read-only for views; only the host updates it", object: object, property: property.name)
            }
            if let expected = change.expectedVersion, expected != versions[property.name, default: 0] {
                throw StateBusError(
                    .versionConflict,
                    "expected version \(expected), but '\(property.name)' is at version \(versions[property.name, default: 0]); read it again and retry",
                    object: object, property: property.name)
            }
            let current = working[property.name] ?? values[property.name] ?? property.defaultValue
            let normalized: Value
            do {
                if let normalizeElement = property.normalizeElement, let fast = try Self.elementChange(change, of: current, normalizeElement) {
                    normalized = fast
                } else {
                    normalized = try property.normalize(Self.candidate(change, of: current))
                }
            } catch let error as ValuePathError {
                let verb = change.operation == .replace ? "set" : change.operation.rawValue
                throw StateBusError(
                    .invalidPath, "cannot \(verb) \(change.path) in '\(property.name)': \(error.reason)", object: object, property: property.name)
            } catch let error as StateBusError {
                throw StateBusError(error.code, error.message, object: object, property: property.name)
            } catch {
                throw StateBusError(.other, "\(error)", object: object, property: property.name)
            }
            if fromView, let elementValidator = property.elementValidator {
                for element in Self.writtenElements(change, in: normalized) {
                    if let reason = elementValidator.check(element) {
                        throw StateBusError(.validationFailed, reason, object: object, property: property.name)
                    }
                }
            }
            if fromView {
                for validator in property.validators {
                    if let reason = validator(normalized) {
                        throw StateBusError(.validationFailed, reason, object: object, property: property.name)
                    }
                }
            }
            let currentSize = workingSizes[property.name] ?? sizes[property.name] ?? current.encodedSizeBound
            let size = Self.elementSizeChange(change, before: current, after: normalized).map { currentSize + $0 } ?? normalized.encodedSizeBound
            if changes.count > 1 {
                working[property.name] = normalized
                workingSizes[property.name] = size
            }
            resolved.append(Resolved(change: change, newValue: normalized, size: size))
        }
        try checkSizes(of: resolved, limits: limits)
        return resolved
    }

    /// Applies resolved changes as the next batch.
    /// - Returns: the batch's sequence number.
    mutating func apply(_ resolved: [Resolved]) -> UInt64 {
        sequence += 1
        for change in resolved {
            values[change.change.property] = change.newValue
            versions[change.change.property] = sequence
            totalBytes += change.size - sizes[change.change.property, default: 0]
            sizes[change.change.property] = change.size
        }
        return sequence
    }

    /// The property's value after a change, before normalisation.
    private static func candidate(_ change: PropertyChange, of current: Value) throws(ValuePathError) -> Value {
        change.replacesWholeValue ? change.value : try change.applied(to: current)
    }

    /// A keyed collection's value after an operation on one of its elements, with only that
    /// element normalised; `nil` when the change is not such an operation.
    private static func elementChange(
        _ change: PropertyChange, of current: Value, _ normalizeElement: @Sendable (Value) throws(StateBusError) -> Value
    ) throws -> Value? {
        switch (change.operation, change.path.components.first) {
        case (.insert, nil):
            return try current.applying(.insert, normalizeElement(change.value), at: .root, position: change.position)
        case (.remove, .id?), (.move, .id?):
            return try change.applied(to: current)  // the elements themselves are unchanged
        case (.replace, .id(let id)?):
            let element: ValuePath = [.id(id)]
            let changed = try change.applied(to: current)
            guard let part = changed[element] else { return nil }
            return try changed.setting(normalizeElement(part), at: element)
        default:
            return nil
        }
    }

    /// How much an operation on one element of a keyed collection changes the collection's
    /// size bound (a list's bound is its framing plus its elements'); `nil` for any other
    /// change, whose new value is measured whole.
    private static func elementSizeChange(_ change: PropertyChange, before: Value, after: Value) -> Int? {
        switch (change.operation, change.path.components.first) {
        case (.replace, .id(let id)?):
            let element: ValuePath = [.id(id)]
            guard let old = before[element], let new = after[element] else { return nil }
            return new.encodedSizeBound - old.encodedSizeBound
        case (.insert, nil):
            guard let id = change.value.elementID, let inserted = after[[.id(id)]] else { return nil }
            return inserted.encodedSizeBound
        case (.remove, .id(let id)?):
            return before[[.id(id)]].map { -$0.encodedSizeBound }
        case (.move, .id?):
            return 0
        default:
            return nil
        }
    }

    /// The elements of a keyed collection a change inserts or changes, as they are after it:
    /// one for an element operation, every element for a whole-value write.
    private static func writtenElements(_ change: PropertyChange, in collection: Value) -> [Value] {
        switch (change.operation, change.path.components.first) {
        case (.remove, _), (.move, _): return []
        case (.insert, nil): return change.value.elementID.flatMap { collection[[.id($0)]] }.map { [$0] } ?? []
        case (.replace, .id(let id)?): return collection[[.id(id)]].map { [$0] } ?? []
        default:
            if case .list(let items) = collection { return items }
            return []
        }
    }
}
