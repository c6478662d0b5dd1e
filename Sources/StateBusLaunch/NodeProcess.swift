import Foundation
import StateBusRuntime

/// A child process started by a test or a launcher: its output lines can be awaited with a
/// deadline, it can be paused, killed and restarted, and it is always ended in the end (call
/// ``terminate(grace:)`` in a `defer`, or let a `TestSystem` of StateBusTesting do it).
///
/// Its lines are read on a thread of its own (see `NodeProcess+Lines.swift`), and its exit
/// is seen by another that blocks in the kernel (``ChildExit``): nothing polls. Thread
/// safety: every method may be called from any thread or task; the synchronous stops
/// (``kill()``, ``pause()``, ``terminate(grace:)``, ``waitForExit(timeout:)``) block the
/// caller until the event or its deadline; in async code, await ``stop(grace:)`` and
/// ``exited(timeout:)`` instead, which wait on a thread of their own rather than on one of
/// the few that run every task. Dropping the last reference to a running process asks it to
/// stop (SIGTERM) and kills it 2 s later if it has not, without blocking.
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
        /// The current run's process id (0 before the first start).
        var pid: pid_t = 0
        var input: FileHandle?
        var lines = LineWaiters()
        var run = 0
        /// The current run's exit, seen by ``ChildExit``.
        var exit = OneTimeEvent()
        /// The end of the current run's output (its pipe closed).
        var outputEnd = OneTimeEvent()
        var exitWaiters: [CheckedContinuation<Int32, Never>] = []
        var exitStatus: Int32?
        /// The current run's exit was passed to its waiters: later ones get it at once.
        var exitReported = false
    }
    /// Everything that changes, under one lock. Internal, not private, so that
    /// `NodeProcess+Lines.swift` reads and records lines under the same lock.
    let state = Locked(State())

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
        var inherited = ProcessInfo.processInfo.environment
        // Swift's crash backtracer keeps a crashed child's output open while it works (and
        // waits for a debugger when it runs interactively), so stopping the child could hang;
        // a crash still shows as the exit status and the child's last lines. Set
        // SWIFT_BACKTRACE yourself (or in `environment`) to change this.
        if inherited["SWIFT_BACKTRACE"] == nil { inherited["SWIFT_BACKTRACE"] = "enable=no" }
        let (run, exit, outputEnd, previous) = state.withLock { state in
            let previous = state
            state.run += 1
            state.exitStatus = nil
            state.exitReported = false
            state.exit = OneTimeEvent()
            state.outputEnd = OneTimeEvent()
            return (state.run, state.exit, state.outputEnd, previous)
        }
        let child: ChildSpawn.Started
        do {
            child = try ChildSpawn.start(
                executable: executable.path, arguments: arguments, environment: inherited.merging(environment) { _, new in new })
        } catch {
            // Nothing started: the previous run stays the current one.
            state.withLock { state in
                state.run = previous.run
                state.exitStatus = previous.exitStatus
                state.exitReported = previous.exitReported
                state.exit = previous.exit
                state.outputEnd = previous.outputEnd
            }
            throw error
        }
        state.withLock {
            $0.pid = child.pid
            $0.input = child.input
            $0.lines.beginRun()
        }
        readLines(from: child.output, run: run, end: outputEnd)
        ChildExit.watch(child.pid) { [weak self] status in
            self?.exited(run: run, status: status, exit: exit, outputEnd: outputEnd)
        }
    }

    /// Records run `run`'s exit (once, whoever reports it first) and, once its last lines
    /// are in, resumes the tasks awaiting it, so they see those lines; bounded, since a
    /// grandchild may hold the pipe open.
    private func exited(run: Int, status: Int32, exit: OneTimeEvent, outputEnd: OneTimeEvent) {
        let first = state.withLock { state -> Bool in
            guard state.run == run, state.exitStatus == nil else { return false }
            state.exitStatus = status
            return true
        }
        // The run's own event, set after its status, so a woken waiter reads the status.
        exit.fire()
        guard first else { return }
        outputEnd.wait(upTo: .seconds(2))
        let waiters = state.withLock { state -> [CheckedContinuation<Int32, Never>] in
            guard state.run == run else { return [] }
            state.exitReported = true
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
                if let status = state.exitStatus, state.exitReported { return status }
                state.exitWaiters.append(continuation)
                return nil
            }
            if let status { continuation.resume(returning: status) }
        }
    }

    /// The process id of the current run.
    public var pid: Int32 { state.withLock { $0.pid } }

    /// Whether process `pid` (any process, not only a child) is running: it exists and is
    /// not a zombie, a process that ended and waits to be collected by its parent or init.
    public static func isRunning(pid: Int32) -> Bool { ChildExit.isRunning(pid) }

    /// Whether the current run is still going.
    public var isRunning: Bool { state.withLock { $0.pid != 0 && $0.exitStatus == nil } }

    /// Writes one line to the current run's standard input; a run that has ended (or
    /// closed its input) misses it.
    public func send(line: String) {
        guard let input = state.withLock({ $0.input }) else { return }
        _ = PipeWrite.write(Array((line + "\n").utf8), to: input.fileDescriptor)
    }

    /// Closes the current run's standard input: a program that reads it sees its end.
    public func closeInput() {
        // FileHandle closes its descriptor when released.
        let input = state.withLock { state -> FileHandle? in
            defer { state.input = nil }
            return state.input
        }
        try? input?.close()
    }

    /// Sends a signal to the current run.
    public func signal(_ signal: Int32) {
        let pid = self.pid
        if pid > 0 { Foundation.kill(pid, signal) }
    }

    /// Kills the current run with SIGKILL and waits (up to 120 s) for it to end, and (up to
    /// 2 s more) for its last lines: a ``lineCount`` read afterwards counts every line the
    /// killed run printed, so a wait `after` it sees only what comes next.
    public func kill() {
        guard pid > 0 else { return }
        signal(SIGKILL)
        let (exit, outputEnd) = state.withLock { ($0.exit, $0.outputEnd) }
        exit.wait(upTo: .seconds(120))
        outputEnd.wait(upTo: .seconds(2))
    }

    /// Pauses the process (SIGSTOP) and returns once every one of its threads has stopped.
    ///
    /// `kill` returns before the stop takes effect: on a busy machine a thread may run on
    /// (and, say, apply an update) for a while. A test that pauses a node to make it miss
    /// something needs the stop to be complete, so this waits, for up to 5 seconds, for the
    /// kernel to report the child stopped, which it does once every thread has stopped.
    public func pause() {
        let pid = self.pid
        guard pid > 0, isRunning else { return }
        signal(SIGSTOP)
        _ = ChildExit.waitForStop(pid, timeout: .seconds(5))
    }

    /// Resumes a paused process (SIGCONT).
    public func resume() { signal(SIGCONT) }

    /// Asks the process to stop (SIGTERM), waits up to `grace`, then kills it.
    /// - Returns: the exit status, or `nil` when it had to be killed.
    @discardableResult
    public func terminate(grace: Duration = .seconds(5)) -> Int32? {
        let (exit, outputEnd) = state.withLock { ($0.exit, $0.outputEnd) }
        guard pid > 0 else { return nil }
        if !exit.hasFired {
            signal(SIGCONT)
            signal(SIGTERM)
            if !exit.wait(upTo: grace) {
                signal(SIGKILL)
                exit.wait(upTo: .seconds(30))
                return nil
            }
        }
        outputEnd.wait(upTo: .seconds(2))
        return state.withLock { $0.exitStatus }
    }

    /// ``terminate(grace:)`` without blocking the calling thread, for async code: the wait
    /// (up to `grace`, then for the kill) runs on a thread of its own, not on one of the few
    /// threads that run every task.
    /// - Returns: the exit status, or `nil` when it had to be killed.
    @discardableResult
    public func stop(grace: Duration = .seconds(5)) async -> Int32? {
        await onThreadOfItsOwn { self.terminate(grace: grace) }
    }

    /// ``waitForExit(timeout:)`` without blocking the calling thread, for async code.
    /// - Returns: its exit status.
    /// - Throws: ``WaitTimeout`` with the last lines when it runs past `timeout`.
    public func exited(timeout: Duration = .seconds(120)) async throws -> Int32 {
        try await onThreadOfItsOwn { () throws -> Int32 in try self.waitForExit(timeout: timeout) }
    }

    /// Waits for the current run to exit by itself.
    /// - Returns: its exit status.
    /// - Throws: ``WaitTimeout`` with the last lines when it runs past `timeout`.
    public func waitForExit(timeout: Duration = .seconds(120)) throws -> Int32 {
        let (exit, outputEnd) = state.withLock { ($0.exit, $0.outputEnd) }
        guard pid > 0 else { return -1 }
        guard exit.wait(upTo: timeout) else { throw timedOut(waitingFor: "\(name) to exit", after: timeout) }
        // Its last lines may still be in the pipe: a caller reads ``output`` next.
        outputEnd.wait(upTo: .seconds(2))
        return state.withLock { $0.exitStatus } ?? -1
    }

    /// Stops a process nobody holds any more without blocking: SIGTERM now, SIGKILL from
    /// another thread if it has not ended 2 s later.
    deinit {
        let (pid, exit) = state.withLock { ($0.pid, $0.exit) }
        guard pid > 0, !exit.hasFired else { return }
        Foundation.kill(pid, SIGCONT)
        Foundation.kill(pid, SIGTERM)
        Thread.detachNewThread {
            if !exit.wait(upTo: .seconds(2)) { Foundation.kill(pid, SIGKILL) }
        }
    }
}
