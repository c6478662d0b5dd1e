import Foundation
import StateBusTesting
import Testing

/// A launcher, a test process and a bench killed with SIGKILL leave no process behind: every
/// child they started has the kernel's parent-death signal (SIGTERM), and passes it on to
/// its own children the same way.
@Suite("Children never outlive their parent")
struct OrphanTests {
    /// The pids of every process below `root` now (children, their children, ...), read from
    /// /proc: the fourth field of `/proc/PID/stat` is the parent's pid.
    static func descendants(of root: Int32) -> Set<Int32> {
        var parents: [Int32: Int32] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let parent = Int32(fields[1]) { parents[pid] = parent }
        }
        var found: Set<Int32> = []
        var frontier: Set<Int32> = [root]
        while !frontier.isEmpty {
            let next = Set(parents.filter { frontier.contains($0.value) }.keys).subtracting(found)
            found.formUnion(next)
            frontier = next
        }
        return found
    }

    /// Starts `arguments` of `executable`, waits until it has at least `children`
    /// processes below it, kills it with SIGKILL, and expects every one of them to end
    /// within a minute.
    func expectNoOrphans(_ executable: URL, _ arguments: [String], children: Int, name: String) async throws {
        let parent = try NodeProcess(executable: executable, arguments: arguments, name: name)
        var started: Set<Int32> = []
        defer {
            parent.terminate()
            for pid in started where NodeProcess.isRunning(pid: pid) { kill(pid, SIGKILL) }
        }
        let clock = ContinuousClock()
        let startDeadline = clock.now + .seconds(120)
        while started.count < children {
            guard clock.now < startDeadline else {
                Issue.record("\(name) started \(started.count) of \(children) processes in 120 s: \(parent.output.suffix(10))")
                return
            }
            guard NodeProcess.isRunning(pid: parent.pid) else {
                Issue.record("\(name) ended before it started its processes: \(parent.output.suffix(10))")
                return
            }
            // Polled: a process tree has no readiness signal to wait on.
            try await Task.sleep(for: .milliseconds(100))
            started = Self.descendants(of: parent.pid)
        }
        kill(parent.pid, SIGKILL)
        let endDeadline = clock.now + .seconds(60)
        var running = started.filter { NodeProcess.isRunning(pid: $0) }
        while !running.isEmpty, clock.now < endDeadline {
            try await Task.sleep(for: .milliseconds(100))
            running = running.filter { NodeProcess.isRunning(pid: $0) }
        }
        #expect(running.isEmpty, "\(running.count) of \(started.count) processes outlived \(name) by a minute: \(running.sorted())")
    }

    @Test("`statebus launch` killed with SIGKILL: its host and three views end")
    func launcher() async throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../deploy/shared-text.yaml").standardized
        try await expectNoOrphans(try BuiltProducts.executable("statebus"), ["launch", file.path], children: 4, name: "statebus launch")
    }

    @Test("a test process killed with SIGKILL: the host and view it started through StateBusTesting end")
    func testProcess() async throws {
        try await expectNoOrphans(try BuiltProducts.executable("statebus-test-parent"), [], children: 2, name: "the test process")
    }

    @Test("`statebus bench` killed with SIGKILL: its workers end")
    func bench() async throws {
        try await expectNoOrphans(
            try BuiltProducts.executable("statebus"), ["bench", "--quick", "--only", "echo"], children: 2, name: "statebus bench")
    }

    @Test("`statebus demo` killed with SIGKILL: the nodes its launcher started end, and theirs")
    func demo() async throws {
        try await expectNoOrphans(try BuiltProducts.executable("statebus"), ["demo", "--app", "todo"], children: 4, name: "statebus demo")
    }
}
