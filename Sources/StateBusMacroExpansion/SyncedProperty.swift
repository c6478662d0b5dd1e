import SwiftSyntax

/// A stored property of a shared model, as the macros see it.
struct SyncedProperty {
    let name: String
    let type: TypeSyntax
    let initializer: ExprSyntax
    let isHostOnly: Bool
    let isPersisted: Bool
    let validator: ExprSyntax?
    /// `@ValidateElement`'s rule, for a keyed collection's elements.
    let elementValidator: ExprSyntax?

    static let markerNames: Set<String> = [
        "Local", "Persisted", "HostOnly", "Validate", "ValidateElement", "ObservationIgnored", "SharedProperty"
    ]

    /// Whether a member is a stored `var` the model should sync: not `let`, not static,
    /// not computed, not marked `@Local`/`@ObservationIgnored`.
    static func isSyncable(_ variable: VariableDeclSyntax) -> Bool {
        guard variable.bindingSpecifier.tokenKind == .keyword(.var) else { return false }
        if variable.modifiers.contains(where: {
            $0.name.tokenKind == .keyword(.static) || $0.name.tokenKind == .keyword(.class) || $0.name.tokenKind == .keyword(.lazy)
        }) {
            return false
        }
        if variable.hasAttribute("Local") || variable.hasAttribute("ObservationIgnored") { return false }
        guard variable.bindings.count == 1, let binding = variable.bindings.first,
            binding.pattern.is(IdentifierPatternSyntax.self)
        else { return false }
        if let accessors = binding.accessorBlock {
            switch accessors.accessors {
            case .getter: return false
            case .accessors(let list):
                // willSet/didSet observers keep a property stored; get/set make it computed.
                return list.allSatisfy { [.keyword(.willSet), .keyword(.didSet)].contains($0.accessorSpecifier.tokenKind) }
            }
        }
        return true
    }

    /// Reads a syncable variable; `nil` with a reason when it cannot be synced.
    static func read(_ variable: VariableDeclSyntax) -> Result<SyncedProperty, PropertyProblem> {
        guard let binding = variable.bindings.first,
            let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.trimmedDescription
        else {
            return .failure(.unsupportedPattern)
        }
        guard let type = binding.typeAnnotation?.type.trimmed else { return .failure(.missingType(name)) }
        guard let initializer = binding.initializer?.value.trimmed else { return .failure(.missingDefault(name, type.trimmedDescription)) }
        func rule(of marker: String) -> ExprSyntax? {
            guard let attribute = variable.attribute(named: marker) else { return nil }
            if case .argumentList(let arguments)? = attribute.arguments, let first = arguments.first { return first.expression.trimmed }
            return attribute.trailingClosureExpression.map { ExprSyntax($0.trimmed) }
        }
        return .success(
            SyncedProperty(
                name: name, type: type, initializer: initializer,
                isHostOnly: variable.hasAttribute("HostOnly"),
                isPersisted: variable.hasAttribute("Persisted"),
                validator: rule(of: "Validate"),
                elementValidator: rule(of: "ValidateElement")
            ))
    }
}

/// Why a property cannot be synced.
enum PropertyProblem: Error {
    case unsupportedPattern
    case missingType(String)
    case missingDefault(String, String)
}

extension VariableDeclSyntax {
    func attribute(named name: String) -> AttributeSyntax? {
        for element in attributes {
            if let attribute = element.as(AttributeSyntax.self),
                attribute.attributeName.trimmedDescription == name
            {
                return attribute
            }
        }
        return nil
    }

    func hasAttribute(_ name: String) -> Bool { attribute(named: name) != nil }
}

extension AttributeSyntax {
    /// `@Validate { … }` is parsed with the closure as the attribute's last argument on
    /// some toolchains; accept the trailing form too.
    var trailingClosureExpression: ClosureExprSyntax? {
        if case .argumentList(let arguments)? = arguments { return arguments.last?.expression.as(ClosureExprSyntax.self) }
        return nil
    }
}
