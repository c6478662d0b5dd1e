import StateBusWire

/// One synced property of a shared object: its name, type, default and rules.
///
/// The typed initialiser is the usual way to declare one; the model macro generates these.
///
/// ```swift
/// PropertyDefinition("email", default: "", validate: { email in
///     email.contains("@") ? nil : "an email address needs an @"
/// })
/// ```
///
/// A final class, not a struct, though every field is fixed: the host consults a property's
/// definition on every write, and a reference is one retain to pass around where a struct of
/// names, closures and a default value is several.
public final class PropertyDefinition: Sendable {
    /// The property's name, unique in its object.
    public let name: String
    /// The kind of value, when it is a plain one; `nil` for structured values (maps, lists
    /// of a Codable type), which the type check decodes fully.
    public let kind: ValueKind?
    /// The Swift type's name, shown in schemas and errors.
    public let typeName: String
    /// The value a new host starts with.
    public let defaultValue: Value
    /// Whether views may write it. A read-only property has a host-only setter.
    public let isWritable: Bool
    /// Whether the host keeps it durable across restarts.
    public let isPersisted: Bool
    /// Whether null is a valid value of the property's type: the type check accepts it (a
    /// Swift `Optional`, or any type that decodes from null; a property declared by kind
    /// with `kind` `nil`, which takes any value). The model's validators may still refuse it.
    /// Schemas announce it as `optional` (version 2: flag bit 2).
    public let isOptional: Bool

    /// Decodes a candidate value as the property's type and returns its canonical form,
    /// or throws a `typeMismatch` error saying what was expected.
    let normalize: @Sendable (Value) throws(StateBusError) -> Value
    /// The model's checks; each returns a reason to reject, or `nil` to accept.
    let validators: [@Sendable (Value) -> String?]
    /// For a keyed collection (``ElementOperation``): the canonical form of one element, so
    /// that a write of one element is checked in the element's size, not the collection's.
    let normalizeElement: (@Sendable (Value) throws(StateBusError) -> Value)?
    /// The model's check of each element a view's write inserts or changes (a keyed
    /// collection's ``ValidateElement(_:)``).
    let elementValidator: ElementValidator?

    /// Declares a property of a Codable type.
    /// - Parameters:
    ///   - name: the property's name.
    ///   - defaultValue: the value a new host starts with.
    ///   - writable: whether views may write it (default `true`).
    ///   - persisted: whether the host keeps it durable (default `false`).
    ///   - validate: runs on the host before a view's write is applied; returns a reason to
    ///     reject the write, or `nil` to accept it. It must not have side effects.
    ///   - validateElement: for a keyed collection, runs on each element a view's write
    ///     inserts or changes (``ValidateElement(_:)``).
    public init<T: Codable & Sendable>(
        _ name: String,
        default defaultValue: T,
        writable: Bool = true,
        persisted: Bool = false,
        validate: (@Sendable (T) -> String?)? = nil,
        validateElement: ElementValidator? = nil
    ) {
        elementValidator = validateElement
        let encoded = (try? ValueEncoder().encode(defaultValue)) ?? .null
        self.name = name
        self.typeName = String(describing: T.self)
        self.defaultValue = encoded
        self.isWritable = writable
        self.isPersisted = persisted
        switch encoded {
        case .bool: kind = .bool
        case .int: kind = .int
        case .double: kind = .double
        case .string: kind = .string
        case .bytes: kind = .bytes
        default: kind = nil
        }
        let typeName = self.typeName
        // A plain Bool, Int, Double or String is canonical when its kind matches: skip the
        // Codable round trip on the hot path. (Not for other types that encode as one of these
        // kinds, such as a String-backed enum, whose decoding also checks the value.)
        if T.self is any KeyedCollectionProperty.Type {
            normalizeElement = { (value: Value) throws(StateBusError) -> Value in
                do {
                    // Looked up again here: the metatype `any KeyedCollectionProperty.Type` is
                    // not Sendable, `T` is.
                    guard let keyed = T.self as? any KeyedCollectionProperty.Type else { return value }
                    return try keyed.normalizeElement(value)
                } catch {
                    throw StateBusError(.typeMismatch, "expected an element of \(typeName), got \(value): \(error)", property: name)
                }
            }
        } else {
            normalizeElement = nil
        }
        let canonicalKind: ValueKind? = T.self == Int.self || T.self == Bool.self || T.self == Double.self || T.self == String.self ? kind : nil
        let normalize: @Sendable (Value) throws(StateBusError) -> Value = { (value: Value) throws(StateBusError) -> Value in
            if let canonicalKind, value.kind == canonicalKind { return value }
            do {
                let typed = try ValueDecoder().decode(T.self, from: value)
                return try ValueEncoder().encode(typed)
            } catch {
                throw StateBusError(.typeMismatch, "expected a value of type \(typeName), got \(value): \(error)", property: name)
            }
        }
        self.normalize = normalize
        // Asked of the type check itself, so the schema says what a write of null meets.
        self.isOptional = (try? normalize(.null)) != nil
        if let validate {
            validators = [
                { value in
                    guard let typed = try? ValueDecoder().decode(T.self, from: value) else { return "not a \(typeName)" }
                    return validate(typed)
                }
            ]
        } else {
            validators = []
        }
    }

    /// Declares a property by value kind alone, for tools and clients without Swift types.
    /// - Parameters:
    ///   - name: the property's name.
    ///   - kind: the kind every value must have (`nil`: any value).
    ///   - defaultValue: the starting value.
    ///   - writable: whether views may write it.
    ///   - persisted: whether the host keeps it durable.
    ///   - validate: a check that returns a reason to reject, or `nil`.
    public init(
        _ name: String,
        kind: ValueKind?,
        default defaultValue: Value,
        writable: Bool = true,
        persisted: Bool = false,
        validate: (@Sendable (Value) -> String?)? = nil
    ) {
        self.name = name
        self.kind = kind
        self.typeName = kind.map { "\($0)" } ?? "any"
        self.defaultValue = defaultValue
        self.isWritable = writable
        self.isPersisted = persisted
        // A property of any kind takes null as it takes every value.
        self.isOptional = kind == nil
        self.normalize = { (value: Value) throws(StateBusError) -> Value in
            guard let kind else { return value }
            if value.kind == kind { return value }
            if kind == .double, case .int(let number) = value { return .double(Double(number)) }
            throw StateBusError(.typeMismatch, "expected \(kind), got \(value.kind) \(value)", property: name)
        }
        self.validators = validate.map { [$0] } ?? []
        self.normalizeElement = nil
        self.elementValidator = nil
    }

    /// The same property, starting from `value` instead of its default.
    /// - Throws: `StateBusError` (`typeMismatch`) when the value does not fit the type.
    func startingFrom(_ value: Value) throws(StateBusError) -> PropertyDefinition {
        PropertyDefinition(copying: self, defaultValue: try normalize(value))
    }

    private init(copying other: PropertyDefinition, defaultValue: Value) {
        name = other.name
        kind = other.kind
        typeName = other.typeName
        self.defaultValue = defaultValue
        isWritable = other.isWritable
        isPersisted = other.isPersisted
        isOptional = other.isOptional
        normalize = other.normalize
        validators = other.validators
        normalizeElement = other.normalizeElement
        elementValidator = other.elementValidator
    }
}
