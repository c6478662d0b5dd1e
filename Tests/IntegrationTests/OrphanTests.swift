import Foundation
import StateBusRuntime
import StateBusTesting
import Testing

/// A launcher, a test process and a bench killed with SIGKILL leave no process behind: every
/// child they started has the kernel's parent-death signal (SIGTERM), and passes it on to
/// its own children the same way.
@Suite("Children never outlive their parent")
struct OrphanTests {
    /// A process, told apart from a later one that reuses its pid by its start time.
    struct ProcessID: Hashable {
        let pid: Int32
        let startTime: Substring

        /// Whether this very process still runs (not a zombie, not a newer one of its pid).
        var isRunning: Bool {
            NodeProcess.isRunning(pid: pid) && OrphanTests.status(of: pid)?.startTime == startTime
        }
    }

    /// A process's parent and start time, from `/proc/PID/stat`: the fields after the
    /// command name (in parentheses, which may hold spaces) are state, parent, ..., and the
    /// start time is the 22nd field of the line.
    static func status(of pid: Int32) -> (parent: Int32, startTime: Substring)? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else {
            return nil
        }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let parent = Int32(fields[1]) else { return nil }
        return (parent, fields[19])
    }

    /// Every process below `root` now (children, their children, ...).
    static func descendants(of root: Int32) -> Set<ProcessID> {
        var parents: [Int32: (parent: Int32, startTime: Substring)] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            if let pid = Int32(entry), let status = status(of: pid) { parents[pid] = status }
        }
        var found: Set<ProcessID> = []
        var frontier: Set<Int32> = [root]
        while !frontier.isEmpty {
            let next = parents.filter { frontier.contains($0.value.parent) }.map { ProcessID(pid: $0.key, startTime: $0.value.startTime) }
            let new = Set(next).subtracting(found)
            found.formUnion(new)
            frontier = Set(new.map(\.pid))
        }
        return found
    }

    /// Starts `arguments` of `executable`, waits until it has at least `children`
    /// processes below it at once, kills it with SIGKILL, and expects every process seen
    /// below it to end within a minute.
    func expectNoOrphans(_ executable: URL, _ arguments: [String], children: Int, name: String) async throws {
        let parent = try NodeProcess(executable: executable, arguments: arguments, name: name)
        var seen: Set<ProcessID> = []
        defer {
            parent.terminate()
            for process in seen where process.isRunning { kill(process.pid, SIGKILL) }
        }
        // On a thread of its own: the looks must come every 100 ms even when the suite keeps
        // Swift's few pool threads busy, or a short-lived parent ends before one comes.
        let pid = parent.pid
        let watched = await onThreadOfItsOwn { () -> (seen: Set<ProcessID>, running: Set<ProcessID>, problem: String?) in
            var seen: Set<ProcessID> = []
            let clock = ContinuousClock()
            let startDeadline = clock.now + .seconds(120)
            while true {
                let below = Self.descendants(of: pid)
                seen.formUnion(below)
                if below.count >= children { break }
                guard clock.now < startDeadline else { return (seen, [], "started fewer than \(children) processes in 120 s") }
                guard NodeProcess.isRunning(pid: pid) else { return (seen, [], "ended before it started its processes") }
                // Polled: a process tree has no readiness signal to wait on.
                usleep(100_000)
            }
            kill(pid, SIGKILL)
            let endDeadline = clock.now + .seconds(60)
            var running = seen.filter(\.isRunning)
            while !running.isEmpty, clock.now < endDeadline {
                // Polled too: these are not this process's children, so no exit is reported.
                usleep(100_000)
                running = running.filter(\.isRunning)
            }
            return (seen, running, nil)
        }
        seen = watched.seen
        if let problem = watched.problem {
            Issue.record("\(name) \(problem): \(parent.output.suffix(10))")
            return
        }
        let running = watched.running
        #expect(running.isEmpty, "\(running.count) of \(seen.count) processes outlived \(name) by a minute: \(running.map(\.pid).sorted())")
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
            try BuiltProducts.executable("statebus"), ["bench", "--quick", "--only", "echo"], children: 1, name: "statebus bench")
    }

    @Test("`statebus demo` killed with SIGKILL: the nodes its launcher started end, and theirs")
    func demo() async throws {
        try await expectNoOrphans(try BuiltProducts.executable("statebus"), ["demo", "--app", "todo"], children: 2, name: "statebus demo")
    }
}
