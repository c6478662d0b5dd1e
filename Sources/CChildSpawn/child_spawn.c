// fork and exec with what posix_spawn cannot ask for: a signal on the parent's death.
//
// Between fork and exec the child runs only async-signal-safe calls (raw system calls,
// dup2, sigaction, execve, _exit): another thread of the parent may have held malloc's or
// any other lock at the fork, and the child has only a copy of that lock.
#define _GNU_SOURCE
#include "child_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/// Closes every descriptor from `first` on except `keep`: close_range (Linux 5.9) twice
/// around `keep`, else one by one up to the descriptor limit.
static void close_from(int first, int keep) {
    if (syscall(SYS_close_range, (unsigned)first, (unsigned)keep - 1, 0) == 0
        && syscall(SYS_close_range, (unsigned)keep + 1, ~0U, 0) == 0) {
        return;
    }
    long limit = sysconf(_SC_OPEN_MAX);
    if (limit < 0 || limit > 65536) limit = 65536;
    for (int fd = first; fd < limit; fd++) {
        if (fd != keep) close(fd);
    }
}

/// Writes errno to `report` and ends the child: the parent reads it as the spawn's failure.
static void fail(int report) {
    int code = errno;
    while (write(report, &code, sizeof code) < 0 && errno == EINTR) {}
    _exit(127);
}

pid_t statebus_spawn(
    const char *path, char *const argv[], char *const envp[], int input_fd, int output_fd, int parent_death_signal,
    int *error) {
    // The child reports a failed exec through this pipe; a successful exec closes it (cloexec).
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        *error = errno;
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        *error = errno;
        close(report[0]);
        close(report[1]);
        return -1;
    }
    if (pid == 0) {
        close(report[0]);
        if (parent_death_signal != 0) {
            if (prctl(PR_SET_PDEATHSIG, parent_death_signal) != 0) fail(report[1]);
            // The parent died before the signal was asked for: nobody would send it.
            if (getppid() != parent) _exit(127);
        }
        if (setpgid(0, 0) != 0) fail(report[1]);
        struct sigaction defaults = {0};
        defaults.sa_handler = SIG_DFL;
        for (int signal = 1; signal < NSIG; signal++) {
            if (signal != SIGKILL && signal != SIGSTOP) sigaction(signal, &defaults, NULL);
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (dup2(input_fd, 0) < 0 || dup2(output_fd, 1) < 0 || dup2(output_fd, 2) < 0) fail(report[1]);
        // report[1] would be 3 or more: keep it until the exec closes it.
        close_from(3, report[1]);
        execve(path, argv, envp);
        fail(report[1]);
    }
    close(report[1]);
    int code = 0;
    ssize_t got;
    do {
        got = read(report[0], &code, sizeof code);
    } while (got < 0 && errno == EINTR);
    close(report[0]);
    if (got == (ssize_t)sizeof code) {
        // The exec failed: the child has exited (127); collect it so it leaves no zombie.
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        *error = code;
        return -1;
    }
    return pid;
}
