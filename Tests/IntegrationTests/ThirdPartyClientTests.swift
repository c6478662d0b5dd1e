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
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let folder = "/tmp/sbpy-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The client is the code block of the specification itself.
        let specification = try String(contentsOf: root.appendingPathComponent("proto/PROTOCOL.md"), encoding: .utf8)
        let block = try #require(Self.pythonBlock(in: specification, section: "13"))
        let client = """
            CONTROL = "ipc://\(folder)/control"
            import time
            \(block.replacingOccurrences(of: "while True:                                   # live", with: "end = time.time() + 3\nwhile time.time() < end:"))
            print("final", state["sharedText"].string_value, seq)
            """
        try client.write(toFile: "\(folder)/client.py", atomically: true, encoding: .utf8)
        let statebus = try BuiltProducts.executable("statebus")
        let host = try NodeProcess(
            executable: statebus,
            arguments: [
                "host", "--control", "ipc://\(folder)/control", "--object", "SharedData", "--property", "sharedText:string=Hello"
            ], name: "host")
        defer { host.terminate() }
        try await host.waitForLine("ready") { $0.hasPrefix("ready ") }
        let protoc = try NodeProcess(
            executable: URL(fileURLWithPath: "/usr/bin/env"),
            arguments: [
                "protoc", "--python_out=\(folder)", "-I", root.appendingPathComponent("proto").path, "statebus.proto"
            ], name: "protoc")
        #expect(try protoc.waitForExit() == 0, "\(protoc.output)")
        let python = try NodeProcess(
            executable: URL(fileURLWithPath: "/usr/bin/env"), arguments: ["python3", "\(folder)/client.py"],
            environment: ["PYTHONPATH": folder], name: "python")
        defer { python.terminate() }
        #expect(try python.waitForExit(timeout: .seconds(60)) == 0, "\(python.output)")
        #expect(python.output.contains("final hi 1"), "\(python.output)")
        #expect(python.output.contains { $0.contains("accepted: true") })
    }

    @Test(
        "the Python version-2 client in PROTOCOL.md reads the property table, takes a snapshot in parts, writes, and sees the answer and the echo in a run",
        .enabled(if: pythonClientAvailable, "needs protoc, python3, pyzmq and protobuf"))
    func pythonVersion2Client() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let folder = "/tmp/sbpy-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The client is the code block of the specification itself; the lines after it print
        // the state it ended with, for the checks below.
        let specification = try String(contentsOf: root.appendingPathComponent("proto/PROTOCOL.md"), encoding: .utf8)
        let block = try #require(Self.pythonBlock(in: specification, section: "18"))
        let client = """
            CONTROL = "ipc://\(folder)/control"
            \(block)
            value = lambda name: state[names.index(name)]
            print("values", value("count").int_value, value("done").bool_value, value("ratio").double_value,
                  value("note").WhichOneof("kind"), len(value("padding3").string_value))
            print("final", value("sharedText").string_value, value("profile").map_value.entries["name"].string_value, seq)
            """
        try client.write(toFile: "\(folder)/client.py", atomically: true, encoding: .utf8)
        // A cell of every encoding a host's command line can declare (string, int, double, bool,
        // a map, null), and three strings of 2/5 of the host's publication bound each: the
        // snapshot then takes two parts (the first holds two of them, the third goes alone).
        let paddingBytes = HostLimits().maxPublicationBytes * 2 / 5
        let padding = (1...3).flatMap { ["--property", "padding\($0):string=" + String(repeating: "x", count: paddingBytes)] }
        let statebus = try BuiltProducts.executable("statebus")
        let host = try NodeProcess(
            executable: statebus,
            arguments: [
                "host", "--control", "ipc://\(folder)/control", "--object", "SharedData", "--property", "sharedText:string=Hello",
                "--property", "count:int=7", "--property", "ratio:double=0.5", "--property", "done:bool=true",
                "--property", #"profile:any={"name":"Ann"}"#, "--property", "note:any"
            ] + padding, name: "host")
        defer { host.terminate() }
        try await host.waitForLine("ready") { $0.hasPrefix("ready ") }
        let protoc = try NodeProcess(
            executable: URL(fileURLWithPath: "/usr/bin/env"),
            arguments: ["protoc", "--python_out=\(folder)", "-I", root.appendingPathComponent("proto").path, "statebus.proto"], name: "protoc")
        #expect(try protoc.waitForExit() == 0, "\(protoc.output)")
        let python = try NodeProcess(
            executable: URL(fileURLWithPath: "/usr/bin/env"), arguments: ["python3", "\(folder)/client.py"],
            environment: ["PYTHONPATH": folder], name: "python")
        defer { python.terminate() }
        #expect(try python.waitForExit(timeout: .seconds(60)) == 0, "\(python.output)")
        #expect(python.output.contains { $0.hasPrefix("welcome: 9 properties, schema hash ") }, "\(python.output)")
        #expect(python.output.contains("snapshot: 2 parts at sequence 0"), "\(python.output)")
        #expect(python.output.contains("values 7 True 0.5 null_value \(paddingBytes)"), "\(python.output)")
        #expect(python.output.contains("write 1 accepted at 1"), "\(python.output)")
        #expect(python.output.contains("echo of write 1 at 1"), "\(python.output)")
        #expect(python.output.contains("final hi Bo 1"), "\(python.output)")
        #expect(python.output.contains("schema kept"), "\(python.output)")
    }

    /// The Python code block of a numbered section of PROTOCOL.md.
    static func pythonBlock(in specification: String, section: String) -> String? {
        let sections = specification.components(separatedBy: "\n## ")
        guard let text = sections.first(where: { $0.hasPrefix("\(section). ") }) else { return nil }
        return text.components(separatedBy: "```python\n").dropFirst().first?.components(separatedBy: "```").first
    }

    @Test(
        "the Python actions client in PROTOCOL.md sees the actions in the welcome, calls one, gets a thrown error's reason, and lists itself among the connected views",
        .enabled(if: pythonClientAvailable, "needs protoc, python3, pyzmq and protobuf"))
    func pythonActionsClient() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let folder = "/tmp/sbpy-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let specification = try String(contentsOf: root.appendingPathComponent("proto/PROTOCOL.md"), encoding: .utf8)
        let block = try #require(Self.pythonBlock(in: specification, section: "14"))
        let views = try #require(Self.pythonBlock(in: specification, section: "16"))
        try "CONTROL = \"ipc://\(folder)/control\"\n\(block)\n\(views)".write(toFile: "\(folder)/actions.py", atomically: true, encoding: .utf8)
        let statebus = try BuiltProducts.executable("statebus")
        let host = try NodeProcess(
            executable: statebus,
            arguments: ["node", "profile", "--role", "host", "--control", "ipc://\(folder)/control", "--database", "\(folder)/profile.sqlite"],
            name: "host")
        defer { host.terminate() }
        try await host.waitForLine("ready") { $0.hasPrefix("ready ") }
        let protoc = try NodeProcess(
            executable: URL(fileURLWithPath: "/usr/bin/env"),
            arguments: ["protoc", "--python_out=\(folder)", "-I", root.appendingPathComponent("proto").path, "statebus.proto"], name: "protoc")
        #expect(try protoc.waitForExit() == 0, "\(protoc.output)")
        let python = try NodeProcess(
            executable: URL(fileURLWithPath: "/usr/bin/env"), arguments: ["python3", "\(folder)/actions.py"],
            environment: ["PYTHONPATH": folder], name: "python")
        defer { python.terminate() }
        #expect(try python.waitForExit(timeout: .seconds(60)) == 0, "\(python.output)")
        #expect(python.output.contains("actions ['loadUser/0', 'rename/1']"), "\(python.output)")
        #expect(python.output.contains { $0.hasPrefix("ok anna ") }, "\(python.output)")
        #expect(
            python.output.contains { $0.hasPrefix("refused ERROR_CODE_ACTION_FAILED") && $0.contains("cannot be blank") }, "\(python.output)")
        // Section 16's client, after the actions client's hello: it is the one connected view.
        #expect(python.output.contains { $0.contains(" py view ") && $0.hasSuffix(" ms") }, "\(python.output)")
        let get = try NodeProcess(
            executable: statebus, arguments: ["get", "--control", "ipc://\(folder)/control", "--object", "Profile", "user.username"], name: "get")
        #expect(try get.waitForExit() == 0)
        #expect(get.output.last == #""py""#, "\(get.output)")
    }
}
