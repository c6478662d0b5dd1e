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
        /// What the batch publishes for a path write or insert: the canonical part at the
        /// change's path (found once here, not by walking a large collection again).
        var part: Value? = nil
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
            var keyed: KeyedWrite?
            do {
                if let normalizeElement = property.normalizeElement, let write = try Self.keyedWrite(change, of: current, normalizeElement) {
                    keyed = write
                    normalized = write.collection
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
            let currentSize = workingSizes[property.name] ?? sizes[property.name] ?? current.encodedSizeBound
            let size = keyed.map { currentSize + $0.sizeChange } ?? normalized.encodedSizeBound
            if changes.count > 1 {
                working[property.name] = normalized
                workingSizes[property.name] = size
            }
            resolved.append(Resolved(change: change, newValue: normalized, size: size, part: keyed?.part))
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

    /// An operation on one element of a keyed collection, resolved: the collection after it,
    /// with only that element normalised, found with one walk of the list.
    struct KeyedWrite {
        /// The collection after the operation.
        var collection: Value
        /// How much the collection's size bound changes.
        var sizeChange: Int
        /// The element inserted or changed, as stored (for element validators).
        var element: Value?
        /// What the batch publishes: the inserted element, or the part at a replace's path.
        var part: Value?
    }

    /// Resolves an operation on one element of a keyed collection (the property's value a
    /// list of elements with ids); `nil` when the change is not such an operation.
    static func keyedWrite(
        _ change: PropertyChange, of current: Value, _ normalizeElement: @Sendable (Value) throws(StateBusError) -> Value
    ) throws -> KeyedWrite? {
        guard case .list(var items) = current else { return nil }
        switch (change.operation, change.path.components.first) {
        case (.insert, nil):
            let element = try normalizeElement(change.value)
            if let id = element.elementID, items.contains(where: { $0.elementID == id }) {
                throw ValuePathError(path: change.path.description, reason: "an element with id \(id) is already in the list; ids must be unique")
            }
            items.insert(element, at: min(max(0, change.position), items.count))
            return KeyedWrite(collection: .list(items), sizeChange: element.encodedSizeBound, element: element, part: element)
        case (.remove, .id(let id)?), (.move, .id(let id)?):
            guard change.path.components.count == 1, let index = items.index(of: .id(id)) else { return nil }
            let element = items.remove(at: index)
            if change.operation == .move {
                items.insert(element, at: min(max(0, change.position), items.count))
                return KeyedWrite(collection: .list(items), sizeChange: 0)
            }
            return KeyedWrite(collection: .list(items), sizeChange: -element.encodedSizeBound)
        case (.replace, .id(let id)?):
            guard let index = items.index(of: .id(id)) else { return nil }  // the general path says why
            let rest = ValuePath(Array(change.path.components.dropFirst()))
            let changed = try items[index].setting(change.value, at: rest)
            guard changed.elementID == id else { return nil }  // the general path refuses it, saying why
            let element = try normalizeElement(changed)
            let sizeChange = element.encodedSizeBound - items[index].encodedSizeBound
            items[index] = element
            return KeyedWrite(collection: .list(items), sizeChange: sizeChange, element: element, part: element[rest])
        default:
            return nil
        }
    }
}
