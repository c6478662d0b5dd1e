import Foundation

/// A child process's exit and stops, read from the kernel by a thread that blocks in
/// `waitid`: nothing polls.
enum ChildExit {
    /// Reaps child `pid` once it has ended, from a thread of its own, and calls `exited` with
    /// its exit status (128 + the signal number when a signal ended it, as a shell reports).
    static func watch(_ pid: Int32, exited: @escaping @Sendable (Int32) -> Void) {
        Thread.detachNewThread {
            // -1: the kernel no longer knows the child (nothing else reaps ours).
            exited(wait(for: pid, events: WEXITED, keep: false)?.status ?? -1)
        }
    }

    /// Blocks until child `pid` stops (every one of its threads: the kernel reports a stop
    /// only when the whole group has stopped) or ends, or `timeout` passes.
    /// - Returns: whether it stopped or ended in time.
    static func waitForStop(_ pid: Int32, timeout: Duration) -> Bool {
        let stopped = OneTimeEvent()
        Thread.detachNewThread {
            _ = wait(for: pid, events: WSTOPPED | WEXITED, keep: true)
            stopped.fire()
        }
        return stopped.wait(upTo: timeout)
    }

    /// One `waitid` for `events` of child `pid`, retried after a signal; with `keep`, the
    /// child is left to be waited for again (`WNOWAIT`: a stop is looked at, not consumed).
    /// - Returns: what happened and its status (128 + the signal for one that ended the
    ///   child), or `nil` when `pid` is not (or no longer) a child of this process.
    private static func wait(for pid: Int32, events: Int32, keep: Bool) -> (code: Int32, status: Int32)? {
        guard pid > 0 else { return nil }
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, events | (keep ? WNOWAIT : 0)) != 0 {
            guard errno == EINTR else { return nil }
        }
        let status = info._sifields._sigchld.si_status
        return (info.si_code, info.si_code == CLD_EXITED ? status : 128 + status)
    }

    /// Whether process `pid` runs: it exists and is not a zombie (a process that ended and
    /// waits for its parent, or init, to collect it).
    static func isRunning(_ pid: Int32) -> Bool {
        guard pid > 0, Foundation.kill(pid, 0) == 0 || errno != ESRCH else { return false }
        // The state letter follows the command name, which is in parentheses and may hold
        // spaces and parentheses itself, so it is found after the last `)`.
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else {
            return true
        }
        return stat[stat.index(after: close)...].drop { $0 == " " }.first != "Z"
    }
}
