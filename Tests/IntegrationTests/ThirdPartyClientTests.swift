import Foundation
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
        // The client is the code block of the specification itself.
        let specification = try String(contentsOf: root.appendingPathComponent("proto/PROTOCOL.md"), encoding: .utf8)
        let block = try #require(specification.components(separatedBy: "```python\n").last?.components(separatedBy: "```").first)
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
}
