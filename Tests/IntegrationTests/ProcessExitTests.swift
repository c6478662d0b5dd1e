import Foundation
import StateBusTesting
import Testing

/// `NodeProcess` sees a child's exit at once, also while other threads start processes that
/// live on (Foundation's `Process` alone can miss it until they end).
@Suite("Child processes: exits are seen at once under parallel starts")
struct ProcessExitTests {
    @Test("short children started beside long-lived ones from many threads are seen to exit")
    func exitsUnderParallelStarts() async throws {
        let shell = URL(fileURLWithPath: "/bin/sh")
        try await withThrowingTaskGroup(of: Int32.self) { group in
            for index in 0..<16 {
                group.addTask {
                    // A long-lived sibling, started at about the same moment as the short one.
                    let long = try NodeProcess(executable: shell, arguments: ["-c", "exec sleep 120"], name: "long \(index)")
                    defer { long.terminate(grace: .seconds(1)) }
                    let short = try NodeProcess(executable: shell, arguments: ["-c", "exit 7"], name: "short \(index)")
                    return try await short.exited(timeout: .seconds(20))
                }
            }
            for try await status in group { #expect(status == 7) }
        }
    }
}

/// `OneShotCommand`: a short command run to its end through swift-subprocess.
@Suite("One-shot commands: status, output, and a deadline that ends the program")
struct OneShotCommandTests {
    let shell = URL(fileURLWithPath: "/bin/sh")

    @Test("the exit status and both output streams, line by line; a signal is 128 + its number")
    func statusAndOutput() async throws {
        let run = try await OneShotCommand.run(shell, ["-c", "echo one; echo two >&2; echo \"$GREETING\"; exit 3"], environment: ["GREETING": "hi"])
        #expect(run.status == 3)
        #expect(run.output == ["one", "two", "hi"])
        let killed = try await OneShotCommand.run(shell, ["-c", "kill -9 $$"])
        #expect(killed.status == 137)
    }

    @Test("past its deadline the program is ended and the call throws, naming the command")
    func deadline() async throws {
        let pidFile = "/tmp/sb-oneshot-\(UUID().uuidString.prefix(8)).pid"
        defer { try? FileManager.default.removeItem(atPath: pidFile) }
        await #expect(throws: WaitTimeout.self) {
            _ = try await OneShotCommand.run(shell, ["-c", "echo $$ > \(pidFile); exec sleep 60"], timeout: .seconds(2))
        }
        let pid = try #require(Int32(try String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(!NodeProcess.isRunning(pid: pid), "the program outlived its deadline")
    }
}
