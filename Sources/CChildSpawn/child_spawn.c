// vfork and exec with what posix_spawn cannot ask for: a signal on the parent's death.
//
// vfork, as glibc's posix_spawn itself: the child borrows the parent's memory and the
// calling thread waits until the child has exec'd or exited, so there is no copy of the
// address space (a large test process would pay for one at every start) and no fork
// handler of any library runs (one of them could wait for a lock another thread held at the
// fork, in a child that would then never exec). The child runs only system calls: it writes
// nothing of the parent's but `*error` and errno, which belong to the waiting thread.
#define _GNU_SOURCE
#include "child_spawn.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/// Closes every descriptor from 3 on: close_range (Linux 5.9), else one by one up to the
/// descriptor limit.
static void close_from_three(void) {
    if (syscall(SYS_close_range, 3U, ~0U, 0) == 0) return;
    long limit = sysconf(_SC_OPEN_MAX);
    if (limit < 0 || limit > 65536) limit = 65536;
    for (int fd = 3; fd < limit; fd++) close(fd);
}

pid_t statebus_spawn(
    const char *path, char *const argv[], char *const envp[], int input_fd, int output_fd, int parent_death_signal,
    int *error) {
    // Every signal blocked across the vfork: a handler of the parent's must not run in the
    // child, which shares its memory. The child sets its own mask before the exec.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    volatile int child_error = 0;
    pid_t parent = getpid();
    pid_t pid = vfork();
    if (pid == 0) {
        if (parent_death_signal != 0) {
            if (prctl(PR_SET_PDEATHSIG, parent_death_signal) != 0) goto failed;
            // The parent died before the signal was asked for: nobody would send it.
            if (getppid() != parent) _exit(127);
        }
        if (setpgid(0, 0) != 0) goto failed;
        struct sigaction defaults = {0};
        defaults.sa_handler = SIG_DFL;
        for (int signal = 1; signal < NSIG; signal++) {
            if (signal != SIGKILL && signal != SIGSTOP) sigaction(signal, &defaults, NULL);
        }
        if (dup2(input_fd, 0) < 0 || dup2(output_fd, 1) < 0 || dup2(output_fd, 2) < 0) goto failed;
        close_from_three();
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execve(path, argv, envp);
    failed:
        child_error = errno;
        _exit(127);
    }
    int fork_error = errno;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (pid < 0) {
        *error = fork_error;
        return -1;
    }
    if (child_error != 0) {
        // The exec failed: the child has exited (127); collect it so it leaves no zombie.
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        *error = child_error;
        return -1;
    }
    return pid;
}
