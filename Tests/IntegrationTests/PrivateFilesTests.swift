import Foundation
import StateBusTesting
import Testing

/// The files a host leaves on the machine are its user's alone: the runtime folder (0700,
/// refused when it is not private), the ipc socket files and the database files (0600).
/// Each test runs `statebus` processes with a runtime folder of its own (`XDG_RUNTIME_DIR`).
@Suite("Private files: the runtime folder, sockets and databases belong to their user")
struct PrivateFilesTests {
    /// A fresh temporary folder to serve as `XDG_RUNTIME_DIR`.
    static func runtimeBase() throws -> String {
        let path = "/tmp/sbf-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return path
    }

    static func statebus(_ arguments: [String], runtime: String, name: String) throws -> NodeProcess {
        try NodeProcess(
            executable: try BuiltProducts.executable("statebus"), arguments: arguments,
            environment: ["XDG_RUNTIME_DIR": runtime], name: name)
    }

    static func host(runtime: String, extra: [String] = ["--no-persistence"]) throws -> NodeProcess {
        try statebus(["host", "--object", "Counter", "--property", "count:int=0"] + extra, runtime: runtime, name: "host")
    }

    /// The permission bits of a path, not following a symbolic link.
    static func mode(_ path: String) -> mode_t? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return status.st_mode & 0o777
    }

    /// Runs a process that must fail, and returns what it printed.
    static func failure(of process: NodeProcess) async throws -> String {
        #expect(try await process.exited(timeout: .seconds(60)) != 0)
        await process.stop()
        return process.output.joined(separator: "\n")
    }

    @Test("a runtime folder other users can enter is refused by hosts and clients, naming it and what to do")
    func openFolderIsRefused() async throws {
        let base = try Self.runtimeBase()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let folder = "\(base)/statebus"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        chmod(folder, 0o777)  // as another local user could have left it

        let hostOutput = try await Self.failure(of: Self.host(runtime: base))
        #expect(hostOutput.contains(folder), "\(hostOutput)")
        #expect(hostOutput.contains("mode 777"), "\(hostOutput)")
        #expect(hostOutput.contains("chmod 700 \(folder)"), "\(hostOutput)")
        #expect(!hostOutput.contains("ready "))

        // A client does not talk to a socket in such a folder either: it could be anyone's.
        let get = try Self.statebus(
            ["get", "--control", "ipc://\(folder)/statebus.control", "--object", "Counter", "--timeout", "60", "count"],
            runtime: base, name: "get")
        let getOutput = try await Self.failure(of: get)
        #expect(getOutput.contains(folder), "\(getOutput)")
        #expect(getOutput.contains("chmod 700"), "\(getOutput)")
        #expect(getOutput.contains("not connecting to"), "\(getOutput)")
        #expect(!getOutput.contains("timed out"), "a refusal ends the wait at once, not at its deadline: \(getOutput)")
    }

    @Test("a runtime folder that is a symbolic link is refused")
    func symlinkIsRefused() async throws {
        let base = try Self.runtimeBase()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let elsewhere = "\(base)/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createSymbolicLink(atPath: "\(base)/statebus", withDestinationPath: elsewhere)

        let output = try await Self.failure(of: Self.host(runtime: base))
        #expect(output.contains("\(base)/statebus is a symbolic link"), "\(output)")
        #expect(FileManager.default.fileExists(atPath: "\(elsewhere)/statebus.control") == false)
    }

    @Test("a host makes its runtime folder 0700, its sockets and its database files 0600")
    func filesArePrivate() async throws {
        let base = try Self.runtimeBase()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let database = "\(base)/state/counter.sqlite"
        let host = try Self.statebus(
            ["host", "--object", "Counter", "--property", "count:int~=0", "--database", database],
            runtime: base, name: "host")
        defer { host.terminate() }
        try await host.waitForLine("the ready line", timeout: .seconds(60)) { $0.hasPrefix("ready ") }
        let folder = "\(base)/statebus"
        #expect(Self.mode(folder) == 0o700)
        #expect(Self.mode("\(folder)/statebus.control") == 0o600)
        #expect(Self.mode("\(folder)/statebus.updates") == 0o600)
        #expect(Self.mode("\(base)/state") == 0o700)

        // A durable write makes SQLite create its WAL file: it gets the database's mode.
        let set = try Self.statebus(
            ["set", "--control", "ipc://\(folder)/statebus.control", "--object", "Counter", "count", "5"],
            runtime: base, name: "set")
        defer { set.terminate() }
        #expect(try await set.exited(timeout: .seconds(60)) == 0, "\(set.output)")
        for file in [database, database + "-wal", database + ".lock"] {
            #expect(Self.mode(file) == 0o600, "\(file): \(Self.mode(file).map { String($0, radix: 8) } ?? "missing")")
        }
    }
}
