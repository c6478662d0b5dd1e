#ifndef STATEBUS_CZEROMQ_SHIM_H
#define STATEBUS_CZEROMQ_SHIM_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <zmq.h>
#include <errno.h>
#include <pthread.h>
#include <poll.h>
#include <time.h>
#ifdef __linux__
#include <sched.h>
#include <sys/eventfd.h>
#endif

/* Draft options that libzmq 4.3 accepts but does not declare without ZMQ_BUILD_DRAFT_API. */
#ifndef ZMQ_ZAP_ENFORCE_DOMAIN
#define ZMQ_ZAP_ENFORCE_DOMAIN 93
#endif
#ifndef ZMQ_RECONNECT_STOP
#define ZMQ_RECONNECT_STOP 109
#endif

/* errno is a macro on glibc; Swift imports it through Glibc, but a plain function keeps
   the ZeroMQ module independent of the platform overlay. */
static inline int czmq_errno(void) { return zmq_errno(); }

/* The I/O loop wakes its poll through an eventfd: cheaper than an inproc socket pair. */
static inline int czmq_wake_fd(void) {
#ifdef __linux__
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
#else
    return -1;
#endif
}

/* Waits for poll events with a timeout in nanoseconds (negative: forever): ppoll, so a
   timer due in 200 us is not rounded up to a whole millisecond as poll's timeout is. */
static inline int czmq_poll_ns(struct pollfd *fds, unsigned long count, long long timeout_ns) {
#ifdef __linux__
    if (timeout_ns < 0) return ppoll(fds, count, NULL, NULL);
    struct timespec limit = { (time_t)(timeout_ns / 1000000000LL), (long)(timeout_ns % 1000000000LL) };
    return ppoll(fds, count, &limit, NULL);
#else
    return poll(fds, count, timeout_ns < 0 ? -1 : (int)((timeout_ns + 999999) / 1000000));
#endif
}

/* Pins the calling thread to one CPU (the low-latency profile). Returns 0, or an errno. */
static inline int czmq_pin_thread(int cpu) {
#ifdef __linux__
    if (cpu < 0 || cpu >= CPU_SETSIZE) return EINVAL; /* CPU_SET would write outside the set */
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
#else
    (void)cpu;
    return ENOTSUP;
#endif
}

/* Whether this process may run on `cpu` (its affinity mask, as taskset or a cgroup set it):
   1 yes, 0 no. */
static inline int czmq_cpu_allowed(int cpu) {
#ifdef __linux__
    if (cpu < 0 || cpu >= CPU_SETSIZE) return 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
    return CPU_ISSET(cpu, &set) ? 1 : 0;
#else
    (void)cpu;
    return 0;
#endif
}

/* How many CPUs the calling thread may run on (its affinity mask), at least 1. */
static inline int czmq_thread_cpu_count(void) {
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) != 0) return 1;
    int count = CPU_COUNT(&set);
    return count > 0 ? count : 1;
#else
    return 1;
#endif
}

/* Names the calling thread (Linux keeps 15 characters), for top -H and debuggers. */
static inline void czmq_name_thread(const char *name) {
#ifdef __linux__
    pthread_setname_np(pthread_self(), name);
#endif
}

#endif
