import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@Action`: on a view, the marked method of a `@SharedModel` class becomes a call to the
/// host, which runs the method's own body there. `@SharedModel` lists the action in the
/// object's definition and generates the host's dispatch (`_$perform`).
open class ActionExpansion: BodyMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingBodyFor declaration: some DeclSyntaxProtocol & WithOptionalCodeBlockSyntax,
        in context: some MacroExpansionContext
    ) throws -> [CodeBlockItemSyntax] {
        guard let function = declaration.as(FunctionDeclSyntax.self), let body = function.body else {
            context.diagnose(Diagnostic(node: Syntax(node), message: SharedModelDiagnostic.actionNotAMethod))
            return []
        }
        switch ActionMethod.read(function) {
        case .success(let action):
            return ["\(raw: action.remoteCall)"] + Array(body.statements)
        case .failure(.notAsyncThrows):
            context.diagnose(Diagnostic(node: Syntax(function.name), message: SharedModelDiagnostic.actionNotAsyncThrows))
        case .failure(.generic):
            context.diagnose(Diagnostic(node: Syntax(function.name), message: SharedModelDiagnostic.actionGeneric))
        case .failure(.staticMethod):
            context.diagnose(Diagnostic(node: Syntax(function.name), message: SharedModelDiagnostic.actionStatic))
        }
        return Array(body.statements)
    }
}
