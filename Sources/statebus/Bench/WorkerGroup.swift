import Foundation
import StateBusLaunch
import StateBusRuntime

/// Starts worker processes (this same executable, hidden `bench-worker` subcommand) and
/// ends them all, whatever happens.
final class WorkerGroup: Sendable {
    private let processes = Locked<[NodeProcess]>([])

    /// This executable, found through `/proc/self/exe`.
    static var executable: URL { URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath() }

    /// Starts one worker.
    /// - Parameters:
    ///   - role: the worker's role (a `bench-worker` argument).
    ///   - arguments: its options.
    ///   - name: a name for errors.
    func start(_ role: String, _ arguments: [String], environment: [String: String] = [:], name: String) throws -> NodeProcess {
        let process = try NodeProcess(
            executable: Self.executable, arguments: ["bench-worker", role] + arguments, environment: environment, name: name)
        processes.withLock { $0.append(process) }
        return process
    }

    /// Starts a worker of the Python client (`python -m statebus._benchworker ROLE …`),
    /// ended like the others.
    func startPython(
        _ python: PythonClient, _ role: String, _ arguments: [String], environment: [String: String] = [:], name: String
    ) throws -> NodeProcess {
        let process = try NodeProcess(
            executable: python.interpreter, arguments: ["-m", "statebus._benchworker", role] + arguments, environment: environment,
            name: name)
        processes.withLock { $0.append(process) }
        return process
    }

    /// Starts another executable built beside this one (`statebus-bench-view`), ended like a
    /// worker; `nil` when it was not built.
    func startSibling(_ name: String, _ arguments: [String], as displayName: String) throws -> NodeProcess? {
        let sibling = Self.executable.deletingLastPathComponent().appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: sibling.path) else { return nil }
        let process = try NodeProcess(executable: sibling, arguments: arguments, name: displayName)
        processes.withLock { $0.append(process) }
        return process
    }

    /// Starts this executable with any subcommand (`relay`, `load`), ended like a worker.
    func startCommand(_ arguments: [String], name: String) throws -> NodeProcess {
        let process = try NodeProcess(executable: Self.executable, arguments: arguments, name: name)
        processes.withLock { $0.append(process) }
        return process
    }

    /// Waits for a worker's next `bench <event>` line.
    /// - Throws: `WaitTimeout` with the worker's last lines, or `BenchError` when the worker
    ///   reported a failure instead.
    /// - Parameter after: only lines after this many (a second answer to the same command).
    static func line(_ event: String, from process: NodeProcess, after: Int? = nil, timeout: Duration) async throws -> WorkerLine {
        let text = try await process.waitForLine("'bench \(event)'", after: after, timeout: timeout) { line in
            guard let parsed = WorkerLine(line) else { return false }
            return parsed.event == event || parsed.event == "failed"
        }
        guard let line = WorkerLine(text), line.event == event else {
            throw BenchError("\(process.name) failed: \(text)\n" + process.output.suffix(10).joined(separator: "\n"))
        }
        return line
    }

    /// Ends every worker started so far (SIGTERM, then SIGKILL after a grace period).
    func terminateAll() {
        let all = processes.withLock { all in
            defer { all.removeAll() }
            return all
        }
        // All asked at once, then each waited for: the group ends in the time of its slowest
        // process, not the sum of all (a fan-out run ends nine processes).
        for process in all where process.isRunning {
            process.signal(SIGCONT)
            process.signal(SIGTERM)
        }
        for process in all { process.terminate(grace: .seconds(2)) }
    }
}
