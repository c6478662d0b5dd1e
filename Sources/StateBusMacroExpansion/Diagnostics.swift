import SwiftDiagnostics

/// The errors the macros report, each saying what is wrong and what to do.
enum SharedModelDiagnostic: String, DiagnosticMessage {
    case notAClass
    case notFinal
    case notMainActor
    case missingType
    case missingDefault
    case unsupportedPattern
    case actionNotAMethod
    case actionNotAsyncThrows
    case actionGeneric
    case actionStatic

    var message: String {
        switch self {
        case .notAClass:
            "@SharedModel applies to a final class: a shared model is one object that the host owns and views replicate, like an @Observable class; a struct or enum has no identity to share"
        case .notFinal:
            "@SharedModel classes must be 'final': a subclass could add properties that neither the host nor the views know about"
        case .notMainActor:
            "@SharedModel classes must be '@MainActor': changes from other processes are applied on the main actor, as SwiftUI applies state changes"
        case .missingType:
            "a synced property needs an explicit type (for example 'var count: Int = 0'), so the host and every view agree on how it is encoded"
        case .missingDefault:
            "a synced property needs a default value (for example '= 0'): it is the host's starting value and every view's value before it joins"
        case .unsupportedPattern:
            "declare one synced property per 'var', with a plain name"
        case .actionNotAMethod:
            "@Action applies to a method with a body, in a @SharedModel class"
        case .actionNotAsyncThrows:
            "an @Action method must be 'async throws': on a view it is a call to the host, which takes time and can fail (refused, timed out, or the action threw)"
        case .actionGeneric:
            "an @Action method cannot be generic: the host and views must agree on one Codable type per argument and result"
        case .actionStatic:
            "an @Action method must be an instance method: it runs on the host's model object"
        }
    }

    var diagnosticID: MessageID { MessageID(domain: "StateBusMacros", id: rawValue) }
    var severity: DiagnosticSeverity { .error }
}
