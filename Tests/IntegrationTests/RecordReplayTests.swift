import Foundation
import StateBusTesting
import Testing

/// `statebus record` and `statebus replay` with real processes: a scripted run recorded, then
/// replayed up to each recorded sequence, where a view must see what a view of the original
/// saw at that sequence.
@Suite("Record and replay")
struct RecordReplayTests {

    /// The `"values":{…}` part of a `statebus dump --json` line.
    static func values(_ output: [String]) -> String? {
        output.last { $0.hasPrefix("{") }?.components(separatedBy: #""values":"#).last
    }

    @Test("a view of the replay stopped at each recorded sequence sees what a view of the original saw there")
    func replayMatchesTheOriginal() async throws {
        let folder = "/tmp/sbrr-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let statebus = try BuiltProducts.executable("statebus")
        let control = "ipc://\(folder)/host"
        let host = try NodeProcess(
            executable: statebus,
            arguments: [
                "host", "--control", control, "--object", "Counter", "--property", "count:int=0", "--property", "label:string=start",
                "--heartbeat-ms", "200", "--no-persistence"
            ], name: "host")
        defer { host.terminate() }
        try await host.waitForLine("the host ready") { $0.hasPrefix("ready ") }
        let recorder = try NodeProcess(
            executable: statebus, arguments: ["record", "--control", control, "--object", "Counter", "--out", "\(folder)/run.rec"], name: "recorder")
        defer { recorder.terminate() }
        try await recorder.waitForLine("the recorder's snapshot") { $0.hasPrefix("recording object=Counter") }

        // The scripted run, and what a view of the original saw after each step.
        var seen: [String] = []
        for arguments in [["count", "1"], ["label", #""middle""#], ["count", "2"], ["label", #""end""#]] {
            let set = try await runStatebus(["set", "--control", control, "--object", "Counter"] + arguments)
            #expect(set.status == 0, "\(set.output)")
            let dump = try await runStatebus(["dump", "--control", control, "--object", "Counter", "--json"])
            seen.append(try #require(Self.values(dump.output)))
        }
        #expect(recorder.terminate() == 0)
        #expect(recorder.output.contains("recorded 4 publications, sequence 0 to 4"), "\(recorder.output)")

        for (index, expected) in seen.enumerated() {
            let sequence = index + 1
            let replay = try NodeProcess(
                executable: statebus,
                arguments: [
                    "replay", "\(folder)/run.rec", "--control", "ipc://\(folder)/replay\(sequence)", "--speed", "0", "--until", "\(sequence)"
                ],
                name: "replay to \(sequence)")
            defer { replay.terminate() }
            try await replay.waitForLine("replay stopped at \(sequence)") { $0 == "stopped at sequence=\(sequence)" }
            let dump = try await runStatebus(["dump", "--control", "ipc://\(folder)/replay\(sequence)", "--object", "Counter", "--json"])
            #expect(Self.values(dump.output) == expected, "at sequence \(sequence): \(dump.output)")
        }

        // Views cannot rewrite the history.
        let replay = try NodeProcess(
            executable: statebus, arguments: ["replay", "\(folder)/run.rec", "--control", "ipc://\(folder)/replay", "--step"], name: "stepped replay")
        defer { replay.terminate() }
        try await replay.waitForLine("the stepped replay ready") { $0.hasPrefix("ready ") }
        replay.send(line: "")
        try await replay.waitForLine("one step") { $0 == "at sequence=1" }
        let write = try await runStatebus(["set", "--control", "ipc://\(folder)/replay", "--object", "Counter", "count", "9"])
        #expect(write.status == 1)
        #expect(write.output.contains { $0.contains("readOnly") }, "\(write.output)")
        // Waiting for the next line, it still stops at once on SIGTERM (it ignored the signal
        // until a line came, and was killed 5 s later).
        let stopped = await replay.stop(grace: .seconds(30))
        #expect(stopped == 0, "the stepped replay did not end on SIGTERM (nil: killed): \(replay.output.suffix(3))")
    }

    @Test("a file that is not a recording is refused, saying what it is not")
    func notARecording() async throws {
        let path = "/tmp/sbrr-\(UUID().uuidString.prefix(8)).rec"
        try "hello\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try await runStatebus(["replay", path])
        #expect(run.status != 0)
        #expect(run.output.contains { $0.contains("is not a StateBus recording") }, "\(run.output)")
    }
}
