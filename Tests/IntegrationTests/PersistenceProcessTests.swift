import Foundation
import StateBus
import StateBusTesting
import Testing

/// `statebus host` processes on database files they cannot use, and `statebus persisted`.
@Suite("Persisted properties across processes: refusals and the persisted command")
struct PersistenceProcessTests {
    static func folder() throws -> String {
        let path = "/tmp/sbp-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A `statebus host` with a persisted counter. `unprivileged`: as user `nobody` when the
    /// tests run as root, since root writes through file permissions.
    static func host(database: String, control: String, unprivileged: Bool = false) throws -> NodeProcess {
        let statebus = try BuiltProducts.executable("statebus")
        let arguments = [
            "host", "--control", control, "--object", "Counter", "--property", "count:int~=0",
            "--property", "label:string=unsaved", "--database", database, "--heartbeat-ms", "200"
        ]
        guard unprivileged, getuid() == 0 else { return try NodeProcess(executable: statebus, arguments: arguments, name: "host") }
        let setpriv = URL(fileURLWithPath: "/usr/bin/setpriv")
        try #require(FileManager.default.isExecutableFile(atPath: setpriv.path), "setpriv (util-linux) runs the host as nobody")
        return try NodeProcess(
            executable: setpriv, arguments: ["--reuid=65534", "--regid=65534", "--clear-groups", statebus.path] + arguments, name: "host")
    }

    /// Waits for a host that must refuse to start, and returns what it printed.
    static func refusal(of host: NodeProcess) async throws -> String {
        #expect(try await host.exited(timeout: .seconds(60)) != 0)
        await host.stop()
        let output = host.output.joined(separator: "\n")
        #expect(!output.contains("ready "))
        return output
    }

    @Test("a read-only database file is refused, naming it and what to do")
    func readOnlyFile() async throws {
        let folder = try Self.folder()
        let database = "\(folder)/counter.sqlite"
        let store = try SQLitePropertyStore(path: database)
        try store.save([StoredProperty(object: "Counter", property: "count", value: 7, version: 1)])
        store.close()
        try FileManager.default.removeItem(atPath: database + ".lock")
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: database)
        let output = try await Self.refusal(of: Self.host(database: database, control: "ipc://\(folder)/control", unprivileged: true))
        #expect(output.contains("database \(database)"), "\(output)")
        #expect(output.contains("read-only"))
        #expect(output.contains("chmod u+w"))
    }

    @Test("a read-only folder is refused, naming the file and what to do")
    func readOnlyFolder() async throws {
        let parent = try Self.folder()
        let folder = "\(parent)/state"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o555])
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: parent)
        let database = "\(folder)/counter.sqlite"
        let output = try await Self.refusal(of: Self.host(database: database, control: "ipc://\(parent)/control", unprivileged: true))
        #expect(output.contains("database \(database)"), "\(output)")
        #expect(output.contains("the folder must be writable"))
        #expect(!FileManager.default.fileExists(atPath: database))
    }

    @Test("a database another host process holds is refused, naming that host")
    func lockedByAnotherProcess() async throws {
        let folder = try Self.folder()
        let database = "\(folder)/counter.sqlite"
        let first = try Self.host(database: database, control: "ipc://\(folder)/first")
        defer { first.terminate() }
        try await first.waitForLine("ready") { $0.hasPrefix("ready ") }
        let output = try await Self.refusal(of: Self.host(database: database, control: "ipc://\(folder)/second"))
        #expect(output.contains("database \(database)"), "\(output)")
        #expect(output.contains("another host (pid \(first.pid))"))
        #expect(first.isRunning)
    }

    @Test("statebus persisted prints the stored values without starting the host, also while it runs")
    func persistedCommand() async throws {
        let folder = try Self.folder()
        let database = "\(folder)/counter.sqlite"
        let control = "ipc://\(folder)/control"
        let statebus = try BuiltProducts.executable("statebus")
        let host = try Self.host(database: database, control: control)
        defer { host.terminate() }
        try await host.waitForLine("ready") { $0.hasPrefix("ready ") }
        for (property, value) in [("count", "42"), ("label", #""saved""#)] {
            let set = try NodeProcess(
                executable: statebus, arguments: ["set", "--control", control, "--object", "Counter", property, value], name: "set")
            defer { set.terminate() }
            #expect(try await set.exited() == 0, "\(set.output)")
        }

        let text = try NodeProcess(executable: statebus, arguments: ["persisted", "--database", database], name: "persisted")
        defer { text.terminate() }
        #expect(try await text.exited() == 0)
        #expect(text.output.contains { $0.hasPrefix("Counter.count = 42") }, "\(text.output)")
        #expect(!text.output.contains { $0.contains("label") })  // not persisted

        let json = try NodeProcess(executable: statebus, arguments: ["persisted", "--database", database, "--json"], name: "persisted")
        defer { json.terminate() }
        #expect(try await json.exited() == 0)
        let line = try #require(json.output.last)
        let decoded = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: [String: Int]]
        #expect(decoded == ["Counter": ["count": 42]])

        let missing = try NodeProcess(executable: statebus, arguments: ["persisted", "--database", "\(folder)/none.sqlite"], name: "persisted")
        defer { missing.terminate() }
        #expect(try await missing.exited() != 0)
        #expect(missing.output.contains { $0.contains("\(folder)/none.sqlite") && $0.contains("no such database file") })
    }
}
