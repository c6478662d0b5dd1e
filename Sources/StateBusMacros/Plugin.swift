import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin that provides StateBus's macros.
@main
struct StateBusMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        SharedModelMacro.self,
        SharedPropertyMacro.self,
        MarkerMacro.self,
        ActionMacro.self
    ]
}
