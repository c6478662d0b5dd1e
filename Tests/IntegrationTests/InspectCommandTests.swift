import Foundation
import StateBusTesting
import Testing

/// `statebus inspect` runs the `statebus-inspect` executable beside `statebus` (the web
/// server lives there, so that building `statebus` compiles none).
@Suite("statebus inspect: the inspector executable beside statebus")
struct InspectCommandTests {
    @Test("statebus inspect --help shows the inspector's own options, and its errors come back through statebus")
    func forwardsArguments() async throws {
        let help = try await runStatebus(["inspect", "--help"])
        #expect(help.status == 0, "\(help.output)")
        let text = help.output.joined(separator: "\n")
        #expect(text.contains("--recording <recording>"), "\(help.output)")
        #expect(text.contains("USAGE: statebus inspect"), "\(help.output)")
        let refused = try await runStatebus(["inspect", "--control", "ipc:///tmp/x", "--recording", "/tmp/y"])
        #expect(refused.status != 0)
        #expect(
            refused.output.contains { $0.contains("choose one of --control (a live host) and --recording (a file), not both") }, "\(refused.output)")
    }

    @Test("a statebus with no statebus-inspect beside it says what to build")
    func missingInspector() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sbi-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let alone = folder.appendingPathComponent("statebus")
        try FileManager.default.copyItem(at: try BuiltProducts.executable("statebus"), to: alone)
        let run = try await OneShotCommand.run(alone, ["inspect", "--control", "ipc:///tmp/nobody"])
        #expect(run.status == 1)
        #expect(
            run.output.contains {
                $0.contains("there is no \(folder.path)/statebus-inspect. Build it with `swift build --product statebus-inspect`")
            }, "\(run.output)")
    }
}
