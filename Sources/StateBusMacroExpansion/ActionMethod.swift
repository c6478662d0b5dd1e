import SwiftSyntax

/// A method marked `@Action` in a `@SharedModel` class, as the macros read it.
struct ActionMethod {
    struct Parameter {
        /// The argument label at the call site (`nil` for `_`).
        let label: String?
        /// The name inside the method.
        let name: String
        let type: String
    }

    let name: String
    let parameters: [Parameter]
    /// The result type, or `nil` for a method returning nothing.
    let result: String?

    /// Why a method cannot be an action.
    enum Problem: Error {
        case notAsyncThrows
        case generic
        case staticMethod
    }

    static func isAction(_ function: FunctionDeclSyntax) -> Bool {
        function.attributes.contains { $0.as(AttributeSyntax.self)?.attributeName.trimmedDescription == "Action" }
    }

    static func read(_ function: FunctionDeclSyntax) -> Result<ActionMethod, Problem> {
        let effects = function.signature.effectSpecifiers
        guard effects?.asyncSpecifier != nil, effects?.throwsClause != nil else { return .failure(.notAsyncThrows) }
        guard function.genericParameterClause == nil else { return .failure(.generic) }
        guard !function.modifiers.contains(where: { $0.name.tokenKind == .keyword(.static) || $0.name.tokenKind == .keyword(.class) }) else {
            return .failure(.staticMethod)
        }
        let parameters = function.signature.parameterClause.parameters.map { parameter in
            let first = parameter.firstName.text
            let inner = parameter.secondName?.text ?? first
            return Parameter(label: first == "_" ? nil : first, name: inner, type: parameter.type.trimmedDescription)
        }
        var result = function.signature.returnClause?.type.trimmedDescription
        if result == "Void" || result == "()" { result = nil }
        return .success(ActionMethod(name: function.name.text, parameters: parameters, result: result))
    }

    /// `ActionDefinition(...)` for the object's definition.
    var definition: String {
        let parameters = parameters.map { "StateBus.ActionDefinition.Parameter(\"\($0.label ?? "")\", type: \($0.type).self)" }
            .joined(separator: ", ")
        if let result {
            return "StateBus.ActionDefinition(\"\(name)\", parameters: [\(parameters)], result: \(result).self)"
        }
        return "StateBus.ActionDefinition(\"\(name)\", parameters: [\(parameters)])"
    }

    /// A `case` of the generated `_$perform`: decodes the arguments, runs the method on the
    /// host, encodes its result.
    var performCase: String {
        var lines = ["case \"\(name)\":"]
        for (index, parameter) in parameters.enumerated() {
            lines.append(
                "    let _a\(index) = try StateBus._$actionArgument(\(parameter.type).self, _arguments, \(index), action: \"\(name)\", parameter: \"\(parameter.label ?? parameter.name)\")"
            )
        }
        let arguments = parameters.enumerated().map { index, parameter in
            parameter.label.map { "\($0): _a\(index)" } ?? "_a\(index)"
        }.joined(separator: ", ")
        if result != nil {
            lines.append("    return try StateBus._$actionResult(try await self.\(name)(\(arguments)), action: \"\(name)\")")
        } else {
            lines.append("    try await self.\(name)(\(arguments))")
            lines.append("    return .null")
        }
        return lines.joined(separator: "\n")
    }

    /// The statement the `@Action` body macro puts first: on a view, the method is a call to
    /// the host.
    var remoteCall: String {
        let arguments = parameters.map { "try StateBus._$actionArgumentValue(\($0.name), action: \"\(name)\")" }.joined(separator: ", ")
        if let result {
            return "if _$bus._$isReplica { return try await _$bus._$call(\"\(name)\", [\(arguments)], returning: \(result).self) }"
        }
        return "if _$bus._$isReplica { return try await _$bus._$call(\"\(name)\", [\(arguments)]) }"
    }
}
