import StateBusMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing

private let macros: [String: MacroSpec] = [
    "SharedModel": MacroSpec(type: SharedModelMacro.self),
    "SharedProperty": MacroSpec(type: SharedPropertyMacro.self),
    "Local": MacroSpec(type: MarkerMacro.self),
    "HostOnly": MacroSpec(type: MarkerMacro.self),
    "Persisted": MacroSpec(type: MarkerMacro.self),
    "Validate": MacroSpec(type: MarkerMacro.self),
]

/// Reports a macro test failure as a swift-testing issue.
private func fail(_ failure: TestFailureSpec) {
    Issue.record(Comment(rawValue: failure.message), sourceLocation: SourceLocation(
        fileID: failure.location.fileID, filePath: failure.location.filePath,
        line: failure.location.line, column: failure.location.column
    ))
}
