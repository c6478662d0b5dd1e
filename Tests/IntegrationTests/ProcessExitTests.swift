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
                    return try short.waitForExit(timeout: .seconds(20))
                }
            }
            for try await status in group { #expect(status == 7) }
        }
    }
}
