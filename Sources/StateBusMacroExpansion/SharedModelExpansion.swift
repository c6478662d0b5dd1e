import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@SharedModel`: makes a final `@MainActor` class a StateBus shared model. Its stored
/// `var`s are observed (as with `@Observable`) and synced between the host and its views.
open class SharedModelExpansion: MemberMacro, MemberAttributeMacro, ExtensionMacro {
    // MARK: Members

    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let classDecl = declaration.as(ClassDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: Syntax(node), message: SharedModelDiagnostic.notAClass))
            return []
        }
        guard classDecl.modifiers.contains(where: { $0.name.tokenKind == .keyword(.final) }) else {
            context.diagnose(Diagnostic(node: Syntax(classDecl.classKeyword), message: SharedModelDiagnostic.notFinal))
            return []
        }
        guard classDecl.attributes.contains(where: { $0.as(AttributeSyntax.self)?.attributeName.trimmedDescription == "MainActor" }) else {
            context.diagnose(Diagnostic(node: Syntax(classDecl.classKeyword), message: SharedModelDiagnostic.notMainActor))
            return []
        }
        let typeName = classDecl.name.trimmedDescription
        let access = classDecl.modifiers.contains { $0.name.tokenKind == .keyword(.public) || $0.name.tokenKind == .keyword(.open) } ? "public " : ""

        var properties: [SyncedProperty] = []
        for member in classDecl.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self), SyncedProperty.isSyncable(variable) else { continue }
            switch SyncedProperty.read(variable) {
            case .success(let property): properties.append(property)
            case .failure(.missingType): context.diagnose(Diagnostic(node: Syntax(variable), message: SharedModelDiagnostic.missingType))
            case .failure(.missingDefault): context.diagnose(Diagnostic(node: Syntax(variable), message: SharedModelDiagnostic.missingDefault))
            case .failure(.unsupportedPattern):
                context.diagnose(Diagnostic(node: Syntax(variable), message: SharedModelDiagnostic.unsupportedPattern))
            }
        }

        var actions: [ActionMethod] = []
        for member in classDecl.memberBlock.members {
            // Problems with an action are reported by @Action itself, on the method.
            guard let function = member.decl.as(FunctionDeclSyntax.self), ActionMethod.isAction(function),
                case .success(let action) = ActionMethod.read(function)
            else { continue }
            actions.append(action)
        }
        let actionDefinitions = actions.map(\.definition).joined(separator: ",\n            ")
        let performCases = actions.map(\.performCase).joined(separator: "\n")

        let objectName: String = {
            if case .argumentList(let arguments)? = node.arguments,
                let literal = arguments.first?.expression.as(StringLiteralExprSyntax.self)
            {
                return literal.segments.trimmedDescription
            }
            return typeName
        }()

        let definitions = properties.map { property in
            let validate = property.validator.map { ", validate: \($0)" } ?? ""
            let validateElement = property.elementValidator.map { ", validateElement: StateBus.ElementValidator(\($0))" } ?? ""
            return
                "StateBus.PropertyDefinition(\"\(property.name)\", default: (\(property.initializer)) as \(property.type), writable: \(!property.isHostOnly), persisted: \(property.isPersisted)\(validate)\(validateElement))"
        }.joined(separator: ",\n            ")
        let nameCases = properties.map { "if keyPath == \\\(typeName).\($0.name) { return \"\($0.name)\" }" }.joined(separator: "\n        ")
        // A value that does not encode or decode is reported to the model's bus (which logs
        // it with the object and property), never dropped without a word.
        let encodes = properties.map { property in
            """
            do { values["\(property.name)"] = try StateBusWire.ValueEncoder().encode(_\(property.name)) } catch {
                        _$bus._$codingFailed("\(property.name)", of: Self.objectName, decoding: false, error)
                    }
            """
        }.joined(separator: "\n        ")
        let applies = properties.map { property in
            """
            if let value = values["\(property.name)"] {
                        do {
                            let decoded = try StateBusWire.ValueDecoder().decode(\(property.type).self, from: value)
                            withMutation(keyPath: \\.\(property.name)) { _\(property.name) = decoded }
                            applied.insert("\(property.name)")
                        } catch {
                            _$bus._$codingFailed("\(property.name)", of: Self.objectName, decoding: true, error)
                        }
                    }
            """
        }.joined(separator: "\n        ")

        // Element edits (of the view's replica, or of the host's store) are repeated on the
        // property itself where its type can (an IdentifiedArray or Array of decodable
        // elements: the overloads pick by type); `false` makes the bus apply the whole value
        // instead.
        let repeatCases = properties.map { property in
            """
            case "\(property.name)":
                        return withMutation(keyPath: \\.\(property.name)) { StateBus._$repeatElementEdits(edits, on: &_\(property.name)) }
            """
        }.joined(separator: "\n        ")

        // A public model needs a public `init()` for the protocol; give it one unless the
        // class declares initialisers of its own.
        let declaresInit = classDecl.memberBlock.members.contains { $0.decl.is(InitializerDeclSyntax.self) }
        let publicInit: [DeclSyntax] = access.isEmpty || declaresInit ? [] : ["public init() {}"]

        return publicInit + [
            "private let _$observationRegistrar = Observation.ObservationRegistrar()",
            "\(raw: access)let _$bus = StateBus.ModelBus()",
            """
            internal nonisolated func access<Member>(keyPath: KeyPath<\(raw: typeName), Member>) {
                _$observationRegistrar.access(self, keyPath: keyPath)
            }
            """,
            """
            internal nonisolated func withMutation<Member, MutationResult>(
                keyPath: KeyPath<\(raw: typeName), Member>, _ mutation: () throws -> MutationResult
            ) rethrows -> MutationResult {
                try _$observationRegistrar.withMutation(of: self, keyPath: keyPath, mutation)
            }
            """,
            """
            \(raw: access)nonisolated static var objectName: String { \(literal: objectName) }
            """,
            """
            \(raw: access)nonisolated static var objectDefinition: StateBus.ObjectDefinition {
                StateBus.ObjectDefinition(objectName, properties: [
                    \(raw: definitions)
                ], actions: [
                    \(raw: actionDefinitions)
                ])
            }
            """,
            """
            \(raw: access)static func _$propertyName(_ keyPath: PartialKeyPath<\(raw: typeName)>) -> String? {
                \(raw: nameCases)
                return nil
            }
            """,
            """
            \(raw: access)func _$values() -> [String: StateBusWire.Value] {
                var values: [String: StateBusWire.Value] = [:]
                \(raw: encodes)
                return values
            }
            """,
            """
            \(raw: access)func _$perform(_ _action: String, _ _arguments: [StateBusWire.Value]) async throws -> StateBusWire.Value {
                switch _action {
                \(raw: performCases)
                default:
                    throw StateBus.StateBusError(.unknownAction, "'\\(Self.objectName)' has no action '\\(_action)'", object: Self.objectName)
                }
            }
            """,
            """
            \(raw: access)func _$repeatElementEdits(_ property: String, _ edits: [StateBusWire.ElementEdit]) -> Bool {
                switch property {
                \(raw: repeatCases)
                default:
                    return false
                }
            }
            """,
            """
            \(raw: access)func _$apply(_ values: [String: StateBusWire.Value]) -> Set<String> {
                var applied = Set<String>()
                \(raw: applies)
                return applied
            }
            """
        ]
    }

    // MARK: Member attributes

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        guard declaration.is(ClassDeclSyntax.self),
            let variable = member.as(VariableDeclSyntax.self),
            SyncedProperty.isSyncable(variable),
            !variable.hasAttribute("SharedProperty"),
            case .success = SyncedProperty.read(variable)
        else { return [] }
        return ["@SharedProperty"]
    }

    // MARK: Conformances

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let classDecl = declaration.as(ClassDeclSyntax.self),
            classDecl.modifiers.contains(where: { $0.name.tokenKind == .keyword(.final) })
        else { return [] }
        return [try ExtensionDeclSyntax("extension \(type.trimmed): StateBus.SharedModel, Observation.Observable {}")]
    }
}

/// `@SharedProperty`, added by `@SharedModel` to each synced stored property: routes reads
/// through observation and writes through observation and the bus.
open class SharedPropertyExpansion: AccessorMacro, PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self),
            case .success(let property) = SyncedProperty.read(variable)
        else { return [] }
        let name = property.name
        return [
            """
            @storageRestrictions(initializes: _\(raw: name))
            init(initialValue) {
                _\(raw: name) = initialValue
            }
            """,
            """
            get {
                access(keyPath: \\.\(raw: name))
                return _\(raw: name)
            }
            """,
            """
            set {
                let _$old = _\(raw: name)
                withMutation(keyPath: \\.\(raw: name)) {
                    _\(raw: name) = newValue
                }
                _$bus.localChange(\(literal: name), newValue, old: _$old)
            }
            """
        ]
    }

    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self),
            case .success(let property) = SyncedProperty.read(variable)
        else { return [] }
        return ["private var _\(raw: property.name): \(property.type)"]
    }
}

/// The markers `@Local`, `@Persisted`, `@HostOnly` and `@Validate`: they generate nothing;
/// `@SharedModel` reads them.
open class MarkerExpansion: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] { [] }
}
