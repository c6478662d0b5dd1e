import Foundation

/// A program run to its end, its output collected, within a deadline: the short commands a
/// test or a tool runs (`statebus get`, `ip`, `protoc`).
///
/// It is a ``NodeProcess`` whose input is closed at once and whose exit is awaited on a
/// thread of its own, so it suspends instead of blocking one of the threads that run every
/// task, and it ends with its parent as every child does. Long-lived nodes, which a test
/// pauses, kills and restarts and whose lines it awaits while they run, are ``NodeProcess``
/// themselves.
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
    /// - Throws: ``WaitTimeout`` naming the command past `timeout`; ``OutputTooLarge`` past
    ///   `outputLimit`; `POSIXError` when the program cannot be started.
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(60),
        outputLimit: Int = 16 << 20
    ) async throws -> Result {
        let command = ([executable.lastPathComponent] + arguments).joined(separator: " ")
        let process = try NodeProcess(executable: executable, arguments: arguments, environment: environment, name: command)
        // Nothing to read: a program that reads its input sees its end, as from /dev/null.
        process.closeInput()
        let status: Int32
        do {
            status = try await process.exited(timeout: timeout)
        } catch {
            await process.stop(grace: .seconds(2))
            throw WaitTimeout(what: "\(command) to finish", timeout: timeout, lastSeen: process.output.suffix(5).joined(separator: "\n"))
        }
        let output = process.output
        let bytes = output.reduce(0) { $0 + $1.utf8.count + 1 }
        guard bytes <= outputLimit else { throw OutputTooLarge(command: command, bytes: bytes, limit: outputLimit) }
        return Result(status: status, output: output)
    }

    /// A command printed more than the caller keeps.
    public struct OutputTooLarge: Error, CustomStringConvertible, Sendable {
        /// The command, as run.
        public let command: String
        /// What it printed, in bytes.
        public let bytes: Int
        /// The most the caller keeps.
        public let limit: Int
        /// A readable report.
        public var description: String { "\(command) printed \(bytes) bytes, more than the \(limit) kept: pass a larger outputLimit" }
    }
}
