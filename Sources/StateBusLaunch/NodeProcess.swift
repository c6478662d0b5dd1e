import Foundation
import Synchronization

/// A child process started by a test: its output lines can be awaited with a deadline, it
/// can be paused, killed and restarted, and it is always ended when the test ends (call
/// ``terminate()`` in a `defer`, or let ``ProcessGroup`` do it).
public final class NodeProcess: Sendable {
    /// The executable.
    public let executable: URL
    /// The arguments.
    public let arguments: [String]
    /// Extra environment variables.
    public let environment: [String: String]
    /// A name for messages.
    public let name: String
    /// Called with every output line as it arrives (for prefixed forwarding).
    private let onLine: (@Sendable (String) -> Void)?

    private struct State {
        var process: Process?
        var input: FileHandle?
        var lines: [String] = []
        var waiters: [UUID: (predicate: @Sendable (String) -> Bool, continuation: CheckedContinuation<String?, Never>)] = [:]
        var consumed = 0
        var outputEnded = false
        var run = 0
        var exitWaiters: [CheckedContinuation<Int32, Never>] = []
        var exitStatus: Int32?
    }
    private let state = Mutex(State())

    /// Starts a process.
    /// - Parameters:
    ///   - executable: the program.
    ///   - arguments: its arguments.
    ///   - environment: variables added to this process's environment.
    ///   - name: a name for messages (default: the program's file name).
    /// - Throws: when the program cannot be started.
    ///   - onLine: called with every output line as it arrives.
    public init(executable: URL, arguments: [String], environment: [String: String] = [:], name: String? = nil,
                onLine: (@Sendable (String) -> Void)? = nil) throws {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.name = name ?? executable.lastPathComponent
        self.onLine = onLine
        try start()
    }

    /// Starts the program again (after ``kill()`` or exit); its new lines follow the old.
    public func start() throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = input
        let run = state.withLock { state -> Int in
            state.run += 1
            state.exitStatus = nil
            state.outputEnded = false
            return state.run
        }
        process.terminationHandler = { [weak self] ended in
            let status = ended.terminationReason == .uncaughtSignal ? 128 + ended.terminationStatus : ended.terminationStatus
            guard let self else { return }
            // Report the exit once the run's last lines are in, so whoever awaits it sees
            // them; bounded, since a grandchild may hold the pipe open.
            self.awaitOutputEnd(run: run, timeout: .seconds(2))
            self.exited(run: run, status: status)
        }
        try process.run()
        state.withLock {
            $0.process = process
            $0.input = input.fileHandleForWriting
            $0.consumed = $0.lines.count
        }
        let handle = output.fileHandleForReading
        Thread.detachNewThread { [self] in
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    self.received(line)
                }
            }
            if !buffer.isEmpty { self.received(String(decoding: buffer, as: UTF8.self)) }
            self.outputEnded(run: run)
        }
    }

    private func exited(run: Int, status: Int32) {
        let waiters = state.withLock { state -> [CheckedContinuation<Int32, Never>] in
            guard state.run == run else { return [] }
            state.exitStatus = status
            defer { state.exitWaiters = [] }
            return state.exitWaiters
        }
        for waiter in waiters { waiter.resume(returning: status) }
    }

    /// Waits, without blocking a thread, until the current run exits.
    /// - Returns: its exit status (128 + the signal number for a signal, as a shell reports).
    public func exitStatus() async -> Int32 {
        await withCheckedContinuation { continuation in
            let status = state.withLock { state -> Int32? in
                if let status = state.exitStatus { return status }
                state.exitWaiters.append(continuation)
                return nil
            }
            if let status { continuation.resume(returning: status) }
        }
    }

    private func received(_ line: String) {
        onLine?(line)
        // Predicates run outside the lock: they may use this process (its pid, its output).
        let waiters = state.withLock { state in
            state.lines.append(line)
            return state.waiters
        }
        let matched = waiters.filter { $0.value.predicate(line) }.map(\.key)
        guard !matched.isEmpty else { return }
        let continuations = state.withLock { state in matched.compactMap { state.waiters.removeValue(forKey: $0)?.continuation } }
        for continuation in continuations { continuation.resume(returning: line) }
    }

    /// The reader of run `run` saw the end of its output.
    private func outputEnded(run: Int) {
        state.withLock { if $0.run == run { $0.outputEnded = true } }
    }

    /// Blocks until the output of run `run` has been read to its end, or `timeout` passed.
    private func awaitOutputEnd(run: Int, timeout: Duration) {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, !state.withLock({ $0.run != run || $0.outputEnded }) { usleep(1_000) }
    }

    /// The process id of the current run.
    public var pid: Int32 { state.withLock { $0.process?.processIdentifier ?? 0 } }

    /// Whether the current run is still going.
    public var isRunning: Bool { state.withLock { $0.process?.isRunning ?? false } }

    /// Every line printed so far (standard output and error, all runs).
    public var output: [String] { state.withLock { $0.lines } }

    /// The number of lines printed so far: pass it as `after` to wait only for later lines.
    public var lineCount: Int { state.withLock { $0.lines.count } }

    /// Waits for a line printed by the current run that satisfies `predicate` (lines
    /// already printed count too, unless `after` skips them).
    /// - Parameters:
    ///   - description: what is awaited, for the timeout error.
    ///   - lineIndex: only lines from this index on (see ``lineCount``) count.
    ///   - timeout: the deadline.
    ///   - predicate: the test for a line.
    /// - Returns: the first matching line.
    /// - Throws: ``WaitTimeout`` naming what was awaited and showing the last lines.
    @discardableResult
    public func waitForLine(_ description: String, after lineIndex: Int? = nil, timeout: Duration = .seconds(30), where predicate: @escaping @Sendable (String) -> Bool) async throws -> String {
        let id = UUID()
        let line: String? = await withTaskGroup(of: String?.self) { group in
            group.addTask { [self] in
                await withCheckedContinuation { continuation in
                    // Register first, then check what is already there, outside the lock: a
                    // line arriving in between is seen by one of the two.
                    let existing = state.withLock { state -> ArraySlice<String> in
                        state.waiters[id] = (predicate, continuation)
                        let start = min(state.lines.count, max(state.consumed, lineIndex ?? 0))
                        return state.lines[start...]
                    }
                    // An exited process may be started again (by a launcher's respawn, or the
                    // test), so a wait lasts until its deadline, not until the output ends.
                    if let line = existing.first(where: predicate),
                       let waiter = state.withLock({ $0.waiters.removeValue(forKey: id) }) {
                        waiter.continuation.resume(returning: line)
                    }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            let waiter = self.state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(returning: nil)
            group.cancelAll()
            return first
        }
        guard let line else {
            throw WaitTimeout(what: "\(name): \(description)", timeout: timeout, lastSeen: output.suffix(15).joined(separator: "\n"))
        }
        return line
    }

    /// Writes one line to the current run's standard input.
    public func send(line: String) {
        let input = state.withLock { $0.input }
        try? input?.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Sends a signal to the current run.
    public func signal(_ signal: Int32) {
        let pid = self.pid
        if pid > 0 { Foundation.kill(pid, signal) }
    }

    /// Kills the current run with SIGKILL and waits for it to end.
    public func kill() {
        signal(SIGKILL)
        state.withLock { $0.process }?.waitUntilExit()
    }

    /// Pauses the process (SIGSTOP) and returns once every one of its threads has stopped.
    ///
    /// `kill` returns before the stop takes effect: on a busy machine a thread may run on
    /// (and, say, apply an update) for a while. A test that pauses a node to make it miss
    /// something needs the stop to be complete, so this waits for the kernel to report every
    /// thread stopped (`/proc/PID/task/*/stat`), for up to 5 seconds.
    public func pause() {
        signal(SIGSTOP)
        let pid = self.pid
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline, isRunning, !Self.allThreadsStopped(pid) { usleep(500) }
    }

    /// Whether the kernel reports every thread of `pid` stopped (state `T` or `t`).
    static func allThreadsStopped(_ pid: Int32) -> Bool {
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return false }
        return threads.allSatisfy { thread in
            // The state follows the command name, which is in parentheses and may hold spaces.
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            let state = stat[stat.index(after: close)...].drop { $0 == " " }.first
            return state == "T" || state == "t"
        }
    }

    /// Resumes a paused process (SIGCONT).
    public func resume() { signal(SIGCONT) }

    /// Asks the process to stop (SIGTERM), waits up to `grace`, then kills it.
    /// - Returns: the exit status, or `nil` when it had to be killed.
    @discardableResult
    public func terminate(grace: Duration = .seconds(5)) -> Int32? {
        guard let process = state.withLock({ $0.process }) else { return nil }
        if process.isRunning {
            signal(SIGCONT)
            signal(SIGTERM)
            let deadline = ContinuousClock.now + grace
            while process.isRunning && ContinuousClock.now < deadline { usleep(2_000) }
            if process.isRunning {
                signal(SIGKILL)
                process.waitUntilExit()
                return nil
            }
        }
        process.waitUntilExit()
        awaitOutputEnd(run: state.withLock { $0.run }, timeout: .seconds(2))
        return process.terminationStatus
    }

    /// Waits for the current run to exit by itself.
    /// - Returns: its exit status.
    public func waitForExit(timeout: Duration = .seconds(30)) throws -> Int32 {
        guard let process = state.withLock({ $0.process }) else { return -1 }
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { usleep(2_000) }
        guard !process.isRunning else {
            throw WaitTimeout(what: "\(name) to exit", timeout: timeout, lastSeen: output.suffix(15).joined(separator: "\n"))
        }
        // Its last lines may still be in the pipe: a caller reads ``output`` next.
        awaitOutputEnd(run: state.withLock { $0.run }, timeout: .seconds(2))
        return process.terminationStatus
    }

    deinit { terminate(grace: .seconds(2)) }
}

/// A wait that ran out of time: what was awaited, for how long, and what was seen last.
public struct WaitTimeout: Error, CustomStringConvertible, Sendable {
    /// What was awaited.
    public let what: String
    /// The deadline.
    public let timeout: Duration
    /// The last state or output seen.
    public let lastSeen: String

    /// Creates a timeout report.
    /// - Parameters:
    ///   - what: what was awaited.
    ///   - timeout: the deadline that passed.
    ///   - lastSeen: the last state or output seen, to show why.
    public init(what: String, timeout: Duration, lastSeen: String) {
        self.what = what
        self.timeout = timeout
        self.lastSeen = lastSeen
    }

    /// A readable report.
    public var description: String {
        "timed out after \(timeout) waiting for \(what)\nlast seen:\n\(lastSeen)"
    }
}
