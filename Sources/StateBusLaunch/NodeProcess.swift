import Foundation
import Synchronization

/// A child process started by a test or a launcher: its output lines can be awaited with a
/// deadline, it can be paused, killed and restarted, and it is always ended in the end (call
/// ``terminate(grace:)`` in a `defer`, or let a `TestSystem` of StateBusTesting do it).
///
/// Its lines are read on a thread of its own (see `NodeProcess+Lines.swift`). Thread safety:
/// every method may be called from any thread or task; the synchronous stops (``kill()``,
/// ``pause()``, ``terminate(grace:)``, ``waitForExit(timeout:)``) block the caller.
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
    let onLine: (@Sendable (String) -> Void)?

    struct State {
        var process: Process?
        var input: FileHandle?
        var lines = LineWaiters()
        var outputEnded = false
        var run = 0
        var exitWaiters: [CheckedContinuation<Int32, Never>] = []
        var exitStatus: Int32?
    }
    /// Everything that changes, under one lock. Internal, not private, so that
    /// `NodeProcess+Lines.swift` reads and records lines under the same lock.
    let state = Mutex(State())

    /// Starts a process.
    /// - Parameters:
    ///   - executable: the program.
    ///   - arguments: its arguments.
    ///   - environment: variables added to this process's environment.
    ///   - name: a name for messages (default: the program's file name).
    ///   - onLine: called with every output line as it arrives.
    /// - Throws: when the program cannot be started.
    public init(
        executable: URL, arguments: [String], environment: [String: String] = [:], name: String? = nil,
        onLine: (@Sendable (String) -> Void)? = nil
    ) throws {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.name = name ?? executable.lastPathComponent
        self.onLine = onLine
        try start()
    }

    /// Starts the program again (after ``kill()`` or exit); its new lines follow the old.
    /// - Throws: when the program cannot be started.
    public func start() throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var inherited = ProcessInfo.processInfo.environment
        // Swift's crash backtracer keeps a crashed child's output open while it works (and
        // waits for a debugger when it runs interactively), so stopping the child could hang;
        // a crash still shows as the exit status and the child's last lines. Set
        // SWIFT_BACKTRACE yourself (or in `environment`) to change this.
        if inherited["SWIFT_BACKTRACE"] == nil { inherited["SWIFT_BACKTRACE"] = "enable=no" }
        process.environment = inherited.merging(environment) { _, new in new }
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
            $0.lines.beginRun()
        }
        readLines(from: output.fileHandleForReading, run: run)
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

    /// The process id of the current run.
    public var pid: Int32 { state.withLock { $0.process?.processIdentifier ?? 0 } }

    /// Whether the current run is still going.
    public var isRunning: Bool { state.withLock { $0.process }.map { !Self.hasExited($0) } ?? false }

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

    /// Kills the current run with SIGKILL and waits (up to 30 s) for it to end.
    public func kill() {
        signal(SIGKILL)
        guard let process = state.withLock({ $0.process }) else { return }
        _ = blockingPoll(upTo: .seconds(30), every: .milliseconds(1)) { Self.hasExited(process) }
    }

    /// Whether a run has ended: `Process` says so, or the kernel does (``ChildExit``).
    private static func hasExited(_ process: Process) -> Bool {
        !process.isRunning || ChildExit.peek(process.processIdentifier) != nil
    }

    /// The exit status of a run that has ended, from `Process` once it noticed, else from
    /// the kernel.
    private static func status(of process: Process) -> Int32 {
        if !process.isRunning { return process.terminationStatus }
        return ChildExit.peek(process.processIdentifier) ?? -1
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
        blockingPoll(upTo: .seconds(5), every: .microseconds(500)) { !isRunning || ProcStatus.allThreadsStopped(pid) }
    }

    /// Resumes a paused process (SIGCONT).
    public func resume() { signal(SIGCONT) }

    /// Asks the process to stop (SIGTERM), waits up to `grace`, then kills it.
    /// - Returns: the exit status, or `nil` when it had to be killed.
    @discardableResult
    public func terminate(grace: Duration = .seconds(5)) -> Int32? {
        guard let process = state.withLock({ $0.process }) else { return nil }
        if !Self.hasExited(process) {
            signal(SIGCONT)
            signal(SIGTERM)
            if !blockingPoll(upTo: grace, every: .milliseconds(2), until: { Self.hasExited(process) }) {
                signal(SIGKILL)
                _ = blockingPoll(upTo: .seconds(30), every: .milliseconds(1)) { Self.hasExited(process) }
                return nil
            }
        }
        awaitOutputEnd(run: state.withLock { $0.run }, timeout: .seconds(2))
        return Self.status(of: process)
    }

    /// Waits for the current run to exit by itself.
    /// - Returns: its exit status.
    /// - Throws: ``WaitTimeout`` with the last lines when it runs past `timeout`.
    public func waitForExit(timeout: Duration = .seconds(30)) throws -> Int32 {
        guard let process = state.withLock({ $0.process }) else { return -1 }
        guard blockingPoll(upTo: timeout, every: .milliseconds(2), until: { Self.hasExited(process) }) else {
            throw timedOut(waitingFor: "\(name) to exit", after: timeout)
        }
        // Its last lines may still be in the pipe: a caller reads ``output`` next.
        awaitOutputEnd(run: state.withLock { $0.run }, timeout: .seconds(2))
        return Self.status(of: process)
    }

    deinit { terminate(grace: .seconds(2)) }
}
