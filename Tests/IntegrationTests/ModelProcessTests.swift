import Foundation
import StateBusTesting
import Testing

@Suite("One model type across processes")
struct ModelProcessTests {
    @Test("a host and two view processes edit the profile through bindings and converge; a rejected edit rolls back")
    func profileAcrossProcesses() async throws {
        let folder = "/tmp/sbm-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let control = "ipc://\(folder)/profile"
        let statebus = try BuiltProducts.executable("statebus")
        let host = try NodeProcess(
            executable: statebus, arguments: ["node", "profile", "--role", "host", "--control", control, "--database", "\(folder)/profile.sqlite"],
            name: "host")
        defer { host.terminate() }
        try await host.waitForLine("ready") { $0.hasPrefix("ready ") }
        let first = try NodeProcess(
            executable: statebus, arguments: ["node", "profile", "--screen", "edit", "--name", "first"],
            environment: ["STATEBUS_CONTROL": control], name: "first")
        let second = try NodeProcess(
            executable: statebus, arguments: ["node", "profile", "--screen", "edit", "--name", "second"],
            environment: ["STATEBUS_CONTROL": control], name: "second")
        defer {
            first.terminate()
            second.terminate()
        }
        for view in [first, second] {
            try await view.waitForLine("the first render") { $0.contains("Username field: anna") }
        }
        first.send(line: "username bea")
        second.send(line: "email bea@example.org")
        for view in [first, second] {
            try await view.waitForLine("both edits") { $0.contains("Email field: bea@example.org") }
            try await view.waitForLine("both edits") { $0.contains("Username field: bea") }
        }
        let dump = try NodeProcess(executable: statebus, arguments: ["dump", "--control", control, "--object", "Profile", "--json"], name: "dump")
        #expect(try await dump.exited() == 0)
        #expect(dump.output.contains { $0.contains(#""user":{"email":"bea@example.org","username":"bea"}"#) }, "\(dump.output)")

        let before = first.lineCount
        first.send(line: "email broken")
        try await first.waitForLine("the error view", after: before) { $0.contains("Error: 'broken' is not a valid email address") }
        try await first.waitForLine("the rollback", after: before) { $0.contains("Email field: bea@example.org") }
    }
}
