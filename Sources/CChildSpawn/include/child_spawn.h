#ifndef STATEBUS_CHILD_SPAWN_H
#define STATEBUS_CHILD_SPAWN_H

#include <sys/types.h>

/// Starts (vfork and exec) `path` with `argv` and exactly `envp` in a process group of its own, its standard
/// input from `input_fd` and its standard output and error to `output_fd`, every other
/// descriptor closed and every signal back to its default and unblocked.
///
/// When `parent_death_signal` is not 0 the child receives that signal when the thread that
/// called this function ends: call it from a thread that lives as long as the process
/// (Linux's PR_SET_PDEATHSIG follows the creating thread, not the process). A child whose
/// parent is already gone by the time it could ask for the signal exits at once (127).
///
/// Returns the child's pid, or -1 with `*error` set to the errno of what failed: the fork,
/// or the exec in the child (a missing or non-executable program).
pid_t statebus_spawn(
    const char *path, char *const argv[], char *const envp[], int input_fd, int output_fd, int parent_death_signal,
    int *error);

#endif
