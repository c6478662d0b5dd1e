import Foundation

/// What Linux's `/proc` reports about a process's threads.
///
/// `kill(pid, SIGSTOP)` returns before the stop takes effect; only the kernel's per-thread
/// state says when every thread has actually stopped (see ``NodeProcess/pause()``).
enum ProcStatus {
    /// Whether the kernel reports every thread of `pid` stopped (state `T` or `t`);
    /// `false` when the process is gone or `/proc` cannot be read.
    static func allThreadsStopped(_ pid: Int32) -> Bool {
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return false }
        return threads.allSatisfy { thread in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/stat", encoding: .utf8) else { return false }
            let state = threadState(stat: stat)
            return state == "T" || state == "t"
        }
    }

    /// The state letter in the text of a `/proc/PID/task/TID/stat` file.
    ///
    /// The state follows the command name, which is in parentheses and may hold spaces and
    /// parentheses itself, so it is found after the last `)`.
    static func threadState(stat: String) -> Character? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].drop { $0 == " " }.first
    }
}
