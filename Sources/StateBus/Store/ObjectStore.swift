import StateBusWire

/// The host's state of one object: values and per-property versions by property index (the
/// index the welcome assigns), and the object's sequence number.
///
/// A value type, checked and changed under the host's lock; `validate` never changes it, so
/// a rejected write leaves no trace. Arrays by index, not dictionaries by name: a write to
/// one property costs one name lookup, and encoding and snapshots walk the arrays.
struct ObjectStore: Sendable {
    let definition: ObjectDefinition
    /// Each property's value, by index.
    private(set) var values: [Value]
    /// The sequence at which each property last changed (0: not this epoch).
    private(set) var versions: [UInt64]
    private(set) var sequence: UInt64 = 0
    /// Each property's encoded size bound (``Value/encodedSizeBound``) and their sum, kept
    /// up to date so a write is checked against ``HostLimits`` without measuring the object.
    private(set) var sizes: [Int]
    private(set) var totalBytes = 0
    /// Where the elements of keyed collections sit, by property index: kept while elements
    /// change in place (``applyElementInPlace(_:fromView:limits:)``), dropped by any other
    /// change of the property.
    private(set) var elementPositions: [Int: ElementPositions] = [:]
    /// The values' changes, for a follower (the host's model) to repeat, while one follows.
    private var journal: ElementJournal?

    init(definition: ObjectDefinition, restored: [String: Value] = [:]) {
        self.definition = definition
        var values = definition.properties.map(\.defaultValue)
        for (name, value) in restored {
            if let index = definition.index(of: name) { values[index] = value }
        }
        self.values = values
        versions = Array(repeating: 0, count: values.count)
        sizes = values.map(\.encodedSizeBound)
        totalBytes = sizes.reduce(0, +)
    }

    /// The value of the property of that name.
    func value(of name: String) -> Value? { definition.index(of: name).map { values[$0] } }

    /// The version of the property of that name.
    func version(of name: String) -> UInt64? { definition.index(of: name).map { versions[$0] } }

    /// Every property's value by name (for reading tools; the hot paths use indexes).
    var namedValues: [String: Value] {
        var named: [String: Value] = [:]
        named.reserveCapacity(values.count)
        for (index, property) in definition.properties.enumerated() { named[property.name] = values[index] }
        return named
    }

    /// Starts keeping the values' changes for a follower (the host's model), from now.
    /// - Returns: every property's value now: the follower's starting point.
    mutating func follow() -> [String: Value] {
        journal = ElementJournal()
        return namedValues
    }

    /// What changed since ``follow()`` or the last call: the element edits to repeat, and the
    /// values of the properties that changed any other way, or are in `whole`.
    mutating func takeFollowed(whole: Set<String>) -> (edits: [String: [ElementEdit]], values: [String: Value]) {
        guard let taken = journal?.take() else { return ([:], [:]) }
        return taken.handedOver(whole: whole) { value(of: $0) }
    }

    /// Stops keeping the values' changes.
    mutating func unfollow() { journal = nil }

    /// Notes that the follower changed these properties itself, or tried to: it is given
    /// their values whole, not the edits it already made (or edits made before to a list it
    /// no longer holds).
    mutating func followerChanged(_ names: some Sequence<String>) {
        journal?.replaced(names)
    }

    /// A change resolved to a whole new property value, ready to apply.
    struct Resolved: Sendable {
        /// The property's index.
        let property: Int
        let change: PropertyChange
        /// The property's whole new value; `.null` for an element operation applied in place
        /// (``ObjectStore/applyElementInPlace(_:fromView:limits:)``), which always has what it
        /// publishes in `part` or in `change`, and never shares the list it changed.
        let newValue: Value
        /// `newValue.encodedSizeBound`, found from the element's size alone for an element
        /// operation (walking a large collection for every element written would cost time
        /// in its size).
        let size: Int
        /// What the batch publishes for a path write or insert: the canonical part at the
        /// change's path (found once here, not by walking a large collection again).
        var part: Value? = nil
    }

    /// What earlier changes of a batch made a property hold (a batch of several changes).
    typealias Working = [(property: Int, value: Value, size: Int)]

    /// Checks changes as one batch, without changing anything.
    /// - Parameters:
    ///   - changes: the changes, applied in order (later ones see earlier ones).
    ///   - fromView: whether a view wrote them: then read-only properties and validators apply.
    ///   - limits: the size bounds (see ``checkSizes(of:limits:)``).
    /// - Returns: the resolved changes.
    /// - Throws: `StateBusError` with the first reason the batch cannot apply.
    func validate(_ changes: [PropertyChange], fromView: Bool, limits: HostLimits = HostLimits()) throws(StateBusError) -> [Resolved] {
        guard !changes.isEmpty else { throw StateBusError(.badRequest, "a write must change at least one property", object: definition.name) }
        // Values set by earlier changes of this batch. Not a copy of `values`: changing a copy
        // would copy the whole object, on every write.
        var working: Working = []
        var resolved: [Resolved] = []
        resolved.reserveCapacity(changes.count)
        for change in changes {
            let item = try resolve(change, fromView: fromView, after: working)
            if changes.count > 1 { working.append((item.property, item.newValue, item.size)) }
            resolved.append(item)
        }
        try checkSizes(of: resolved, limits: limits)
        return resolved
    }

    /// Checks one change as a batch of its own, without changing anything: the common write,
    /// without lists.
    func validate(_ change: PropertyChange, fromView: Bool, limits: HostLimits = HostLimits()) throws(StateBusError) -> Resolved {
        let item = try resolve(change, fromView: fromView, after: [])
        try checkSize(of: item, limits: limits)
        return item
    }

    /// Resolves one change of a batch to the property's new value: name, rights, version,
    /// path or element operation, type and the model's validators.
    private func resolve(_ change: PropertyChange, fromView: Bool, after working: Working) throws(StateBusError) -> Resolved {
        let object = definition.name
        guard let index = definition.index(of: change.property) else {
            let known = definition.properties.map(\.name).joined(separator: ", ")
            throw StateBusError(.unknownProperty, "no property '\(change.property)'; known: \(known)", object: object, property: change.property)
        }
        let property = definition.properties[index]
        if fromView && !property.isWritable {
            throw StateBusError(
                .readOnly, "'\(property.name)' is read-only for views; only the host updates it", object: object, property: property.name)
        }
        if let expected = change.expectedVersion, expected != versions[index] {
            throw StateBusError(
                .versionConflict,
                "expected version \(expected), but '\(property.name)' is at version \(versions[index]); read it again and retry",
                object: object, property: property.name)
        }
        let earlier = working.last { $0.property == index }
        let normalized: Value
        var keyed: KeyedWrite?
        do {
            if change.replacesWholeValue, property.normalizeElement == nil {
                // The common write of a whole value: the current value is not needed.
                normalized = try property.normalize(change.value)
            } else {
                let current = earlier?.value ?? values[index]
                if let normalizeElement = property.normalizeElement, let write = try Self.keyedWrite(change, of: current, normalizeElement) {
                    keyed = write
                    normalized = write.collection
                } else {
                    normalized = try property.normalize(Self.candidate(change, of: current))
                }
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
        // An element operation checked its element alone (elementEdit): walking the whole
        // collection for each would cost what the in-place way saves.
        let wholeSize = keyed == nil ? try Self.sizeCheckingNesting(of: normalized, object: object, property: property.name) : 0
        if fromView, let elementValidator = property.elementValidator {
            let written: [Value]
            if let keyed {
                written = keyed.element.map { [$0] } ?? []
            } else if case .list(let items) = normalized {
                written = items
            } else {
                written = []
            }
            for element in written {
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
        let currentSize = earlier?.size ?? sizes[index]
        let size = keyed.map { currentSize + $0.sizeChange } ?? wholeSize
        return Resolved(property: index, change: change, newValue: normalized, size: size, part: keyed?.part)
    }

    /// Checks changes as one batch and applies them, or throws and changes nothing: the
    /// write path's one call, made on the store in place (a copy of the store, as a call of
    /// the non-mutating ``validate(_:fromView:limits:)`` on an array element may make, costs
    /// a retain and a release of each of its arrays).
    /// - Returns: the batch's sequence and the resolved changes.
    mutating func validateAndApply(
        _ changes: [PropertyChange], fromView: Bool, limits: HostLimits
    ) throws(StateBusError) -> (sequence: UInt64, resolved: [Resolved]) {
        let resolved = try validate(changes, fromView: fromView, limits: limits)
        return (apply(resolved), resolved)
    }

    /// ``validateAndApply(_:fromView:limits:)-([PropertyChange],_,_)`` for a batch of one change.
    mutating func validateAndApply(_ change: PropertyChange, fromView: Bool, limits: HostLimits) throws(StateBusError) -> (
        sequence: UInt64, resolved: Resolved
    ) {
        if let applied = applyElementInPlace(change, fromView: fromView, limits: limits) { return applied }
        let resolved = try validate(change, fromView: fromView, limits: limits)
        return (apply(resolved), resolved)
    }

    /// Applies one resolved change as the next batch.
    /// - Returns: the batch's sequence number.
    mutating func apply(_ change: Resolved) -> UInt64 {
        sequence += 1
        store(change)
        return sequence
    }

    /// Applies resolved changes as the next batch.
    /// - Returns: the batch's sequence number.
    mutating func apply(_ resolved: [Resolved]) -> UInt64 {
        sequence += 1
        for change in resolved { store(change) }
        return sequence
    }

    /// The positions of a keyed collection's elements, taken out of ``elementPositions``, or
    /// found with one walk (in a function of its own, so that no copy of the list outlives
    /// it to make the change in place copy the list).
    mutating func takePositions(of property: Int) -> ElementPositions? {
        if let kept = elementPositions.removeValue(forKey: property) { return kept }
        guard case .list(let items) = values[property] else { return nil }
        return ElementPositions(of: items)
    }

    /// Puts back positions taken with ``takePositions(of:)`` and not used.
    mutating func keep(_ positions: ElementPositions, of property: Int) {
        elementPositions[property] = positions
    }

    /// Applies an element operation to a keyed collection in place, as the next batch, once
    /// ``applyElementInPlace(_:fromView:limits:)`` checked it: the list, its positions, the
    /// property's version and size.
    /// - Parameter positions: the list's positions, taken out of ``elementPositions`` (so that
    ///   an insert adds to them in place); kept there again, whatever happens.
    /// - Returns: the batch's sequence, or `nil` when the operation did not apply (nothing
    ///   changed).
    mutating func applyElementOperation(
        _ operation: ElementOperation, _ value: Value, at path: ValuePath, position: Int, to property: Int, positions: consuming ElementPositions?,
        size: Int
    ) -> UInt64? {
        let edit = values[property].applyElementOperation(operation, value, at: path, position: position, positions: &positions)
        elementPositions[property] = positions
        guard let edit else { return nil }
        journal?.record(edit, of: definition.properties[property].name)
        sequence += 1
        versions[property] = sequence
        totalBytes += size - sizes[property]
        sizes[property] = size
        return sequence
    }

    /// Stores one resolved change as part of the current batch (``sequence``): its value, its
    /// version and its size.
    @inline(__always)
    private mutating func store(_ change: Resolved) {
        if !elementPositions.isEmpty { elementPositions[change.property] = nil }
        journal?.replaced(definition.properties[change.property].name)
        values[change.property] = change.newValue
        versions[change.property] = sequence
        totalBytes += change.size - sizes[change.property]
        sizes[change.property] = change.size
    }

    /// The property's value after a change, before normalisation.
    private static func candidate(_ change: PropertyChange, of current: Value) throws(ValuePathError) -> Value {
        change.replacesWholeValue ? change.value : try change.applied(to: current)
    }
}
