import Foundation
import StateBus
import StateBusTesting
import Testing

/// Whether python3 with pyzmq and protobuf, and protoc, are installed (deploy/test.sh tries
/// to install them; without them this suite is skipped, and says so).
private let pythonClientAvailable: Bool = {
    let check = Process()
    check.executableURL = URL(fileURLWithPath: "/bin/sh")
    check.arguments = ["-c", "command -v protoc >/dev/null && python3 -c 'import zmq, google.protobuf' 2>/dev/null"]
    guard (try? check.run()) != nil else { return false }
    check.waitUntilExit()
    return check.terminationStatus == 0
}()

@Suite("A client written from proto/PROTOCOL.md alone")
struct ThirdPartyClientTests {
    @Test(
        "the Python client in PROTOCOL.md joins, writes, and sees its echo",
        .enabled(if: pythonClientAvailable, "needs protoc, python3, pyzmq and protobuf"))
    func pythonClient() async throws {
        let workspace = try PythonWorkspace()
        defer { workspace.remove() }
        // The client is the code block of the specification itself.
        let block = try #require(workspace.pythonBlock(section: "13"))
        let client = """
            CONTROL = "\(workspace.control)"
            import time
            \(block.replacingOccurrences(of: "while True:                                   # live", with: "end = time.time() + 3\nwhile time.time() < end:"))
            print("final", state["sharedText"].string_value, seq)
            """
        let host = try NodeProcess(
            executable: try BuiltProducts.executable("statebus"),
            arguments: ["host", "--control", workspace.control, "--object", "SharedData", "--property", "sharedText:string=Hello"], name: "host")
        defer { host.terminate() }
        try await host.waitForLine("ready") { $0.hasPrefix("ready ") }
        let output = try await workspace.run(client)
        #expect(output.contains("final hi 1"), "\(output)")
        #expect(output.contains { $0.contains("accepted: true") })
    }

    @Test(
        "the Python version-2 client in PROTOCOL.md reads the property table, takes a snapshot in parts, writes, and sees the answer and the echo in a run",
        .enabled(if: pythonClientAvailable, "needs protoc, python3, pyzmq and protobuf"))
    func pythonVersion2Client() async throws {
        let workspace = try PythonWorkspace()
        defer { workspace.remove() }
        // The client is the code block of the specification itself; the lines after it print
        // the state it ended with, for the checks below.
        let block = try #require(workspace.pythonBlock(section: "18"))
        let client = """
            CONTROL = "\(workspace.control)"
            \(block)
            value = lambda name: state[names.index(name)]
            print("values", value("count").int_value, value("done").bool_value, value("ratio").double_value,
                  value("note").WhichOneof("kind"), len(value("padding3").string_value))
            print("final", value("sharedText").string_value, value("profile").map_value.entries["name"].string_value, seq)
            """
        // A cell of every encoding a host's command line can declare (string, int, double, bool,
        // a map, null), and three strings of 2/5 of the host's publication bound each: the
        // snapshot then takes two parts (the first holds two of them, the third goes alone).
        let paddingBytes = HostLimits().maxPublicationBytes * 2 / 5
        let padding = (1...3).flatMap { ["--property", "padding\($0):string=" + String(repeating: "x", count: paddingBytes)] }
        let host = try NodeProcess(
            executable: try BuiltProducts.executable("statebus"),
            arguments: [
                "host", "--control", workspace.control, "--object", "SharedData", "--property", "sharedText:string=Hello",
                "--property", "count:int=7", "--property", "ratio:double=0.5", "--property", "done:bool=true",
                "--property", #"profile:any={"name":"Ann"}"#, "--property", "note:any"
            ] + padding, name: "host")
        defer { host.terminate() }
        try await host.waitForLine("ready") { $0.hasPrefix("ready ") }
        let output = try await workspace.run(client)
        #expect(output.contains { $0.hasPrefix("welcome: 9 properties, schema hash ") }, "\(output)")
        #expect(output.contains("snapshot: 2 parts at sequence 0"), "\(output)")
        #expect(output.contains("values 7 True 0.5 null_value \(paddingBytes)"), "\(output)")
        #expect(output.contains("write 1 accepted at 1"), "\(output)")
        #expect(output.contains("echo of write 1 at 1"), "\(output)")
        #expect(output.contains("final hi Bo 1"), "\(output)")
        #expect(output.contains("schema kept"), "\(output)")
    }

    @Test(
        "the Python actions client in PROTOCOL.md sees the actions in the welcome, calls one, gets a thrown error's reason, and lists itself among the connected views",
        .enabled(if: pythonClientAvailable, "needs protoc, python3, pyzmq and protobuf"))
    func pythonActionsClient() async throws {
        let workspace = try PythonWorkspace()
        defer { workspace.remove() }
        let block = try #require(workspace.pythonBlock(section: "14"))
        let views = try #require(workspace.pythonBlock(section: "16"))
        let statebus = try BuiltProducts.executable("statebus")
        let host = try NodeProcess(
            executable: statebus,
            arguments: ["node", "profile", "--role", "host", "--control", workspace.control, "--database", "\(workspace.folder)/profile.sqlite"],
            name: "host")
        defer { host.terminate() }
        try await host.waitForLine("ready") { $0.hasPrefix("ready ") }
        let output = try await workspace.run("CONTROL = \"\(workspace.control)\"\n\(block)\n\(views)")
        #expect(output.contains("actions ['loadUser/0', 'rename/1']"), "\(output)")
        #expect(output.contains { $0.hasPrefix("ok anna ") }, "\(output)")
        #expect(output.contains { $0.hasPrefix("refused ERROR_CODE_ACTION_FAILED") && $0.contains("cannot be blank") }, "\(output)")
        // Section 16's client, after the actions client's hello: it is the one connected view.
        #expect(output.contains { $0.contains(" py view ") && $0.hasSuffix(" ms") }, "\(output)")
        let get = try NodeProcess(
            executable: statebus, arguments: ["get", "--control", workspace.control, "--object", "Profile", "user.username"], name: "get")
        #expect(try await get.exited() == 0)
        #expect(get.output.last == #""py""#, "\(get.output)")
    }
}

/// A scratch folder for a Python client of PROTOCOL.md: the specification's code blocks, the
/// Python code protoc generates from proto/statebus.proto, and a host's control endpoint.
private struct PythonWorkspace {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let folder = "/tmp/sbpy-\(UUID().uuidString.prefix(8))"
    var control: String { "ipc://\(folder)/control" }
    let specification: String

    init() throws {
        specification = try String(contentsOf: Self.root.appendingPathComponent("proto/PROTOCOL.md"), encoding: .utf8)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: folder) }

    /// The Python code block of a numbered section of PROTOCOL.md.
    func pythonBlock(section: String) -> String? {
        let sections = specification.components(separatedBy: "\n## ")
        guard let text = sections.first(where: { $0.hasPrefix("\(section). ") }) else { return nil }
        return text.components(separatedBy: "```python\n").dropFirst().first?.components(separatedBy: "```").first
    }

    /// Generates the protocol's Python code, then runs `script` with it to its end (60 s at
    /// most), expecting exit status 0. - Returns: what it printed.
    func run(_ script: String) async throws -> [String] {
        try script.write(toFile: "\(folder)/client.py", atomically: true, encoding: .utf8)
        let protoc = try NodeProcess(
            executable: URL(fileURLWithPath: "/usr/bin/env"),
            arguments: ["protoc", "--python_out=\(folder)", "-I", Self.root.appendingPathComponent("proto").path, "statebus.proto"], name: "protoc")
        #expect(try await protoc.exited() == 0, "\(protoc.output)")
        let python = try NodeProcess(
            executable: URL(fileURLWithPath: "/usr/bin/env"), arguments: ["python3", "\(folder)/client.py"],
            environment: ["PYTHONPATH": folder], name: "python")
        defer { python.terminate() }
        #expect(try await python.exited(timeout: .seconds(60)) == 0, "\(python.output)")
        return python.output
    }
}
