import Foundation
import StateBus
import StateBusTesting
import Testing

/// The profile's user, for a host with a validator.
private struct Person: Codable, Sendable {
    var username: String
    var email: String
}

/// `statebus get`, `set`, `watch`, `dump` and `objects`, run as processes against a live host.
@Suite("statebus get, set, watch, dump and objects against a live host")
struct IntrospectionTests {
    static let profile = ObjectDefinition(
        "Profile",
        properties: [
            PropertyDefinition(
                "user", default: Person(username: "anna", email: "anna@example.com"),
                validate: { person in
                    person.email.contains("@") ? nil : "'\(person.email)' is not an email address: it needs an @"
                }),
            PropertyDefinition("isLoading", default: false, writable: false)
        ])

    /// Runs `statebus ARGUMENTS` to its end.
    static func statebus(_ arguments: [String], in system: TestSystem) async throws -> (status: Int32, output: [String]) {
        let process = try system.startProcess(executable: system.statebus, arguments: arguments, name: "statebus \(arguments[0])")
        let status = try await process.exited(timeout: .seconds(60))
        return (status, process.output)
    }

    @Test("set writes through the host and shows its rejection reason; get, dump and objects read, as text and JSON")
    func tools() async throws {
        try await withTestSystem { system in
            let host = try await system.startHost([Self.profile])
            let at = ["--control", host.controlEndpoint, "--object", "Profile"]

            // A path write, accepted.
            var run = try await Self.statebus(["set"] + at + ["user.email", #""bea@example.org""#], in: system)
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("accepted at sequence 1"))

            // Rejected by the model's validator: the reason is shown, the exit code says so,
            // and nothing changed.
            run = try await Self.statebus(["set"] + at + ["user.email", #""no-at-sign""#], in: system)
            #expect(run.status != 0)
            #expect(
                run.output.contains { $0.contains("rejected: validationFailed") && $0.contains("'no-at-sign' is not an email address") },
                "\(run.output)")
            run = try await Self.statebus(["set"] + at + ["isLoading", "true", "--json"], in: system)
            #expect(run.status != 0)
            #expect(run.output.contains { $0.hasPrefix(#"{"accepted":false,"code":"readOnly""#) }, "\(run.output)")
            #expect(host.value(of: "user", in: "Profile") == ["username": "anna", "email": "bea@example.org"])
            #expect(host.sequence(of: "Profile") == 1)

            // Bad input is refused with what to do, before anything is sent.
            run = try await Self.statebus(["set"] + at + ["user.email", "unquoted"], in: system)
            #expect(run.status != 0)
            #expect(run.output.contains { $0.contains("is not a JSON value") })

            run = try await Self.statebus(["get"] + at + ["user.email"], in: system)
            #expect(run.status == 0)
            #expect(run.output.last == #""bea@example.org""#)

            run = try await Self.statebus(["dump"] + at + ["--json"], in: system)
            #expect(run.status == 0)
            let dump = try #require(run.output.last)
            #expect(dump.contains(#""sequence":1,"values":{"isLoading":false,"user":{"email":"bea@example.org","username":"anna"}}"#), "\(dump)")

            run = try await Self.statebus(["objects", "--control", host.controlEndpoint], in: system)
            #expect(run.status == 0)
            // Typed properties show their Swift type; read-only ones say so.
            #expect(run.output.contains("  user: Person"), "\(run.output)")
            #expect(run.output.contains("  isLoading: Bool (read-only)"), "\(run.output)")
        }
    }

    @Test("watch prints the state at every change, from any writer")
    func watch() async throws {
        try await withTestSystem { system in
            let host = try await system.startHost([Self.profile])
            let watcher = try system.startProcess(
                executable: system.statebus,
                arguments: ["watch", "--control", host.controlEndpoint, "--object", "Profile"], name: "watch")
            try await watcher.waitForLine("the first state") { $0.hasPrefix("Profile @ sequence 0 (live)") }
            try host.update("isLoading", to: true, in: "Profile")
            try await watcher.waitForLine("the host's change") { $0 == "  isLoading = true" }
            let editor = try await system.startView(of: "Profile", at: host.controlEndpoint, name: "editor")
            try await editor.set("user.username", to: "bea")
            try await watcher.waitForLine("the view's change") { $0 == #"  user = {"email": "anna@example.com", "username": "bea"}"# }
        }
    }
}
