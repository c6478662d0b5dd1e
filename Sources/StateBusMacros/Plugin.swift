import StateBusMacroExpansion
import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin that provides StateBus's macros.
///
/// The compiler asks for each macro by the name its declaration gives
/// (`#externalMacro(module: "StateBusMacros", type: "SharedModelMacro")`) and swift-syntax
/// matches it against the module-qualified type name, so each expansion from
/// `StateBusMacroExpansion` gets a subclass of that name here; the subclass adds nothing.
@main
struct StateBusMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        SharedModelMacro.self,
        SharedPropertyMacro.self,
        MarkerMacro.self,
        ActionMacro.self
    ]
}

/// `@SharedModel`, as the compiler names it.
final class SharedModelMacro: SharedModelExpansion {}

/// `@SharedProperty`, as the compiler names it.
final class SharedPropertyMacro: SharedPropertyExpansion {}

/// `@Local`, `@Persisted`, `@HostOnly`, `@Validate` and `@ValidateElement`, as the compiler names them.
final class MarkerMacro: MarkerExpansion {}

/// `@Action`, as the compiler names it.
final class ActionMacro: ActionExpansion {}
