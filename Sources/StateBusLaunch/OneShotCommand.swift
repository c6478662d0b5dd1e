import Foundation
import Subprocess
import SystemPackage

/// A program run to its end, its output collected, within a deadline: the short commands a
/// test or a tool runs (`statebus get`, `ip`, `protoc`), through swift-subprocess.
///
/// It suspends instead of blocking a thread, and learns of the exit from the kernel (a
/// pidfd), so a child that another thread spawned at the same moment cannot hide the exit
/// the way it can from Foundation's `Process` on Linux. Long-lived nodes, which a test
/// pauses, kills and restarts and whose lines it awaits while they run, are ``NodeProcess``.
///
/// ```swift
/// let get = try await OneShotCommand.run(statebus, ["get", "--object", "Counter", "count"])
/// #expect(get.status == 0 && get.output.last == "5")
/// ```
public enum OneShotCommand {
    /// What a run left: its exit status and its output lines.
    public struct Result: Sendable, Hashable {
        /// The exit status (128 + the signal number for a signal, as a shell reports).
        public let status: Int32
        /// Standard output and standard error, interleaved as written, line by line.
        public let output: [String]
    }

    /// Runs `executable` with `arguments` to its end.
    /// - Parameters:
    ///   - executable: the program.
    ///   - arguments: its arguments.
    ///   - environment: variables added to this process's environment.
    ///   - timeout: how long it may run; past it the program gets SIGTERM, then SIGKILL
    ///     2 s later, and the call throws.
    ///   - outputLimit: the most output kept, in bytes (the call throws past it).
    /// - Returns: its exit status and output lines.
    /// - Throws: ``WaitTimeout`` naming the command past `timeout`; swift-subprocess's error
    ///   when the program cannot be started or writes more than `outputLimit`.
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(60),
        outputLimit: Int = 16 << 20
    ) async throws -> Result {
        var updates: [Environment.Key: String?] = [:]
        for (key, value) in environment { updates[Environment.Key(stringLiteral: key)] = value }
        // As for nodes: Swift's crash backtracer would keep a crashed child's output open.
        if ProcessInfo.processInfo.environment["SWIFT_BACKTRACE"] == nil, environment["SWIFT_BACKTRACE"] == nil {
            updates["SWIFT_BACKTRACE"] = "enable=no"
        }
        let variables = updates
        let command = ([executable.lastPathComponent] + arguments).joined(separator: " ")
        return try await withThrowingTaskGroup(of: Result?.self) { group in
            group.addTask {
                var options = PlatformOptions()
                options.teardownSequence = [.gracefulShutDown(allowedDurationToNextStep: .seconds(2))]
                let result = try await Subprocess.run(
                    .path(FilePath(executable.path)), arguments: Arguments(arguments), environment: .inherit.updating(variables),
                    platformOptions: options, output: .string(limit: outputLimit), error: .combinedWithOutput)
                let status: Int32 =
                    switch result.terminationStatus {
                    case .exited(let code): code
                    case .signaled(let signal): 128 + signal
                    }
                var lines = result.standardOutput.components(separatedBy: "\n")
                if lines.last == "" { lines.removeLast() }
                return Result(status: status, output: lines)
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            // The first to finish decides; cancelling the other ends the program (teardown)
            // or the timer.
            defer { group.cancelAll() }
            guard let result = try await group.next() ?? nil else {
                throw WaitTimeout(what: "\(command) to finish", timeout: timeout, lastSeen: "")
            }
            return result
        }
    }
}
