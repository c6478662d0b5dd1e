import Foundation

/// Whether a child process has ended, read from the kernel.
///
/// Foundation's `Process` on Linux learns of a child's exit when a socket shared with the
/// child closes. A process that another thread spawns at the same moment can inherit that
/// socket and keep it open, so `isRunning` stays true, and `waitUntilExit()` blocks, until
/// that other process ends too (swift-corelibs-foundation issue 4795). Under parallel tests
/// this made a `protoc` that had long exited look alive for 30 s. The kernel knows at once.
enum ChildExit {
    /// The exit status of child `pid` if it has ended (128 + the signal number when a signal
    /// ended it, as a shell reports), else `nil`. The child is not reaped: `Process` still
    /// collects it.
    static func peek(_ pid: Int32) -> Int32? {
        guard pid > 0 else { return nil }
        var info = siginfo_t()
        guard waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0, info._sifields._sigchld.si_pid == pid else { return nil }
        let status = info._sifields._sigchld.si_status
        return info.si_code == CLD_EXITED ? status : 128 + status
    }
}
