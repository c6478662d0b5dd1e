import StateBusMacroExpansion
import SwiftDiagnostics
import SwiftParser
import SwiftSyntax
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import Testing

private let macros: [String: any Macro.Type] = [
    "SharedModel": SharedModelExpansion.self,
    "SharedProperty": SharedPropertyExpansion.self,
    "Local": MarkerExpansion.self,
    "HostOnly": MarkerExpansion.self,
    "Persisted": MarkerExpansion.self,
    "Validate": MarkerExpansion.self,
    "ValidateElement": MarkerExpansion.self,
    "Action": ActionExpansion.self
]

/// Expands the macros in `source`; returns the expanded text and the diagnostics' messages.
private func expand(_ source: String) -> (text: String, diagnostics: [String]) {
    let file = Parser.parse(source: source)
    let context = BasicMacroExpansionContext(sourceFiles: [file: .init(moduleName: "Test", fullFilePath: "Test.swift")])
    // One context for every expansion node, so that every diagnostic lands in it.
    let expanded = file.expand(macros: macros, contextGenerator: { _ in context }, indentationWidth: .spaces(4))
    return (expanded.description, context.diagnostics.map(\.message))
}

/// Removes whitespace differences, so checks compare code, not layout.
private func squeeze(_ text: String) -> String {
    text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
}

@Suite("The @SharedModel macro")
struct SharedModelMacroTests {
    static let model = """
        @MainActor @SharedModel("Profile")
        final class ProfileModel {
            @Validate({ (email: String) in email.contains("@") ? nil : "needs an @" })
            var email: String = ""
            @HostOnly var isLoading: Bool = false
            @Persisted var notifications: Bool = true
            @Local var draft: String = ""
            let id = 1
            var computed: Int { 3 }
        }
        """

    @Test("synced properties get observed accessors and a backing store; markers are respected")
    func accessors() {
        let (text, diagnostics) = expand(Self.model)
        #expect(diagnostics.isEmpty)
        let code = squeeze(text)
        #expect(code.contains("private var _email: String"))
        #expect(code.contains("get { access(keyPath: \\.email) return _email }"))
        // The value before goes with the change: a keyed collection's edit is found by
        // comparing elements instead of encoding the whole collection.
        #expect(
            code.contains(
                "set { let _$old = _email withMutation(keyPath: \\.email) { _email = newValue } _$bus.localChange(\"email\", newValue, old: _$old) }"),
            "\(code)")
        #expect(code.contains("@storageRestrictions(initializes: _isLoading)"))
        #expect(!code.contains("_draft"), "@Local properties stay plain")
        #expect(!code.contains("_id"), "let constants stay plain")
        #expect(!code.contains("_computed"), "computed properties stay plain")
    }

    @Test("a value that does not encode or decode is reported to the bus, never dropped by a silent try?")
    func codingFailuresAreReported() {
        let code = squeeze(expand(Self.model).text)
        #expect(!code.contains("try?"))
        #expect(
            code.contains(
                #"do { values["email"] = try StateBusWire.ValueEncoder().encode(_email) } catch { _$bus._$codingFailed("email", of: Self.objectName, decoding: false, error) }"#
            ))
        #expect(code.contains(#"_$bus._$codingFailed("email", of: Self.objectName, decoding: true, error)"#))
    }

    @Test("the object definition carries names, defaults, writability, persistence and validators")
    func definition() {
        let code = squeeze(expand(Self.model).text)
        #expect(code.contains("static var objectName: String { \"Profile\" }"))
        #expect(
            code.contains(
                #"StateBus.PropertyDefinition("email", default: ("") as String, writable: true, persisted: false, validate: { (email: String) in email.contains("@") ? nil : "needs an @" })"#
            ))
        #expect(code.contains(#"StateBus.PropertyDefinition("isLoading", default: (false) as Bool, writable: false, persisted: false)"#))
        #expect(code.contains(#"StateBus.PropertyDefinition("notifications", default: (true) as Bool, writable: true, persisted: true)"#))
        #expect(code.contains("extension ProfileModel: StateBus.SharedModel, Observation.Observable { }"))
    }

    @Test(
        "misuse gets clear diagnostics",
        arguments: [
            ("@MainActor @SharedModel struct S { var a: Int = 0 }", "applies to a final class"),
            ("@MainActor @SharedModel final class C { var a = 0 }", "needs an explicit type"),
            ("@MainActor @SharedModel final class C { var a: Int }", "needs a default value"),
            ("@MainActor @SharedModel class C { var a: Int = 0 }", "must be 'final'"),
            ("@SharedModel final class C { var a: Int = 0 }", "must be '@MainActor'")
        ])
    func diagnostics(source: String, expected: String) {
        let (_, diagnostics) = expand(source)
        #expect(diagnostics.contains { $0.contains(expected) }, "got \(diagnostics)")
    }

    static let actions = """
        @MainActor @SharedModel
        final class TodoList {
            var titles: [String] = []
            @ValidateElement({ (item: Item) in item.name.isEmpty ? "a name" : nil })
            var items: IdentifiedArrayOf<Item> = []
            @Action func add(_ title: String, at position: Int) async throws -> Int {
                titles.insert(title, at: position)
                return titles.count
            }
            @Action func clear() async throws {
                titles = []
            }
        }
        """

    @Test("an action is listed in the definition, dispatched on the host, and a call to the host on a view")
    func actions() {
        let (text, diagnostics) = expand(Self.actions)
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        let code = squeeze(text)
        #expect(
            code.contains(
                #"StateBus.ActionDefinition("add", parameters: [StateBus.ActionDefinition.Parameter("", type: String.self), StateBus.ActionDefinition.Parameter("at", type: Int.self)], result: Int.self)"#
            ), "\(code)")
        #expect(code.contains(#"StateBus.ActionDefinition("clear", parameters: [])"#))
        // A view's element edits are repeated on each property; the overloads pick by type.
        #expect(
            code.contains(
                #"case "items": return withMutation(keyPath: \.items) { StateBus._$repeatElementEdits(edits, on: &_items) }"#), "\(code)")
        #expect(
            code.contains(
                #"StateBus.PropertyDefinition("items", default: ([]) as IdentifiedArrayOf<Item>, writable: true, persisted: false, validateElement: StateBus.ElementValidator({ (item: Item) in item.name.isEmpty ? "a name" : nil }))"#
            ), "\(code)")
        // The host decodes each argument by position, naming it in errors, and calls the method.
        #expect(
            code.contains(
                #"let _a1 = try StateBus._$actionArgument(Int.self, _arguments, 1, action: "add", parameter: "at")"#))
        #expect(code.contains(#"return try StateBus._$actionResult(try await self.add(_a0, at: _a1), action: "add")"#))
        #expect(code.contains(#"try await self.clear() return .null"#))
        // On a view the body is a call to the host; on the host it runs as written.
        #expect(
            code.contains(
                #"if _$bus._$isReplica { return try await _$bus._$call("add", [try StateBus._$actionArgumentValue(title, action: "add"), try StateBus._$actionArgumentValue(position, action: "add")], returning: Int.self) } titles.insert(title, at: position)"#
            ), "\(code)")
        #expect(code.contains(#"if _$bus._$isReplica { return try await _$bus._$call("clear", []) } titles = []"#))
    }

    @Test(
        "an action that is not async throws, generic or static gets a diagnostic that says why",
        arguments: [
            ("@MainActor @SharedModel final class C { @Action func a() async -> Int { 1 } }", "must be 'async throws'"),
            ("@MainActor @SharedModel final class C { @Action func a<T: Codable>(_ t: T) async throws {} }", "cannot be generic"),
            ("@MainActor @SharedModel final class C { @Action static func a() async throws {} }", "must be an instance method")
        ])
    func actionDiagnostics(source: String, expected: String) {
        let (_, diagnostics) = expand(source)
        #expect(diagnostics.contains { $0.contains(expected) }, "got \(diagnostics)")
    }
}
