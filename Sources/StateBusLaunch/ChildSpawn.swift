import CChildSpawn
import Foundation

/// Starts a child with vfork and exec (`statebus_spawn`, in C), its standard output and error
/// on one pipe and its standard input on another, no other descriptor of this process
/// inherited, and SIGTERM sent to it by the kernel when this process ends, however it ends:
/// a launcher, a test or a bench killed with SIGKILL leaves no node behind.
///
/// Why not `posix_spawn`: it cannot ask for the parent-death signal, which only the child
/// can set between the fork and the exec.
///
/// Why not Foundation's `Process`: on Linux its `run()` lists `/proc/self/fd` to close every
/// other descriptor in the child, and copies each entry's name as a full 256-byte `d_name`,
/// past the end of the entry; with many descriptors open (a test process running many
/// hosts, replicas and children at once) the last entry sits at the end of the directory
/// buffer and the copy reads an unmapped page, crashing the whole process in `memcpy`. The
/// kernel's `closefrom` does the same job without the listing (`close_range` here).
enum ChildSpawn {
    /// What a child receives when this process ends: SIGTERM, so that a node stops as it
    /// does on a launcher's stop (a host commits what it acknowledged; a launcher stops its
    /// own nodes, which have the same signal from it).
    static let parentDeathSignal = SIGTERM

    /// A started child: its pid, the read end of its output, the write end of its input.
    struct Started {
        let pid: pid_t
        let output: FileHandle
        let input: FileHandle
    }

    /// Starts `executable` with `arguments` and exactly `environment`, in a process group of
    /// its own (as `Process` did: a terminal's Ctrl-C reaches the test, which stops it).
    /// - Throws: `POSIXError` with what failed (a missing or non-executable program).
    static func start(executable: String, arguments: [String], environment: [String: String]) throws -> Started {
        guard access(executable, X_OK) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .ENOENT) }
        var output: [Int32] = [-1, -1]
        var input: [Int32] = [-1, -1]
        guard pipe(&output) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EMFILE) }
        guard pipe(&input) == 0 else {
            close(output[0])
            close(output[1])
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EMFILE)
        }
        // Close-on-exec, so no other child inherits them (every child this module starts
        // closes all but 0, 1 and 2 anyway; `pipe2` is not in Swift's Glibc module).
        for fd in output + input { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        // From the spawning thread, so that the parent-death signal fires when this process
        // ends and not when some pool thread does (see SpawningThread).
        let (childInput, childOutput) = (input[0], output[1])
        let spawned = SpawningThread.shared.run { () -> (pid: pid_t, error: Int32) in
            let argv = ([executable] + arguments).map { strdup($0) } + [nil]
            let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer {
                for pointer in argv { free(pointer) }
                for pointer in envp { free(pointer) }
            }
            var error: Int32 = 0
            let pid = statebus_spawn(executable, argv, envp, childInput, childOutput, parentDeathSignal, &error)
            return (pid, error)
        }
        let (pid, status) = (spawned.pid, spawned.pid < 0 ? spawned.error : 0)
        close(input[0])
        close(output[1])
        guard status == 0 else {
            close(input[1])
            close(output[0])
            throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EINVAL)
        }
        return Started(
            pid: pid, output: FileHandle(fileDescriptor: output[0], closeOnDealloc: true),
            input: FileHandle(fileDescriptor: input[1], closeOnDealloc: true))
    }
}
