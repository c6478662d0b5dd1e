import Foundation

/// Starts a child with `posix_spawn`, its standard output and error on one pipe and its
/// standard input on another, and no other descriptor of this process inherited.
///
/// Why not Foundation's `Process`: on Linux its `run()` lists `/proc/self/fd` to close every
/// other descriptor in the child, and copies each entry's name as a full 256-byte `d_name`,
/// past the end of the entry; with many descriptors open (a test process running many
/// hosts, replicas and children at once) the last entry sits at the end of the directory
/// buffer and the copy reads an unmapped page: the whole process crashed in `memcpy`, in
/// the full test suite, every run. The kernel's `closefrom` does the same job without the
/// listing.
enum ChildSpawn {
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
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the copy, so exactly 0, 1 and 2 survive the exec.
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_adddup2(&actions, output[1], 2)
        closeOthers(&actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A process group of its own; signals back to their defaults and none blocked, as
        // after a plain fork and exec from a shell (this process may ignore or block some).
        var defaults = sigset_t()
        sigfillset(&defaults)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var pid: pid_t = 0
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
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

    /// glibc 2.34's `posix_spawn_file_actions_addclosefrom_np`, which Swift's Glibc module
    /// does not declare.
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let addCloseFrom: AddCloseFrom? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: AddCloseFrom.self) }

    /// Closes every descriptor from 3 on in the child: at once with `closefrom`, else one by
    /// one (the descriptors open now, read with each name as the C string it is).
    private static func closeOthers(_ actions: inout posix_spawn_file_actions_t) {
        if let addCloseFrom, addCloseFrom(&actions, 3) == 0 { return }
        guard let directory = opendir("/proc/self/fd") else { return }
        defer { closedir(directory) }
        let own = dirfd(directory)
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) { $0.withMemoryRebound(to: CChar.self, capacity: 1) { String(cString: $0) } }
            guard let fd = Int32(name), fd > 2, fd != own else { continue }
            posix_spawn_file_actions_addclose(&actions, fd)
        }
    }
}
