#ifndef STATEBUS_CMICROHTTPD_SHIM_H
#define STATEBUS_CMICROHTTPD_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>

/* MHD_start_daemon is variadic, which Swift cannot call: one wrapper with the options the
   StateBus HTTP server uses. The daemon serves `listen_fd` (bound and listening already)
   with a thread per connection, so that a handler may wait (for a host's verdict) and an
   event stream's reader may block until its next event; MHD_USE_ITC lets
   MHD_quiesce_daemon hand the socket back before the daemon stops. `completed` is told when
   a request ends, to free what the handler kept for it. */
static inline struct MHD_Daemon *cmhd_start(
    int listen_fd, MHD_AccessHandlerCallback handler, void *context, MHD_RequestCompletedCallback completed,
    unsigned int connection_limit, unsigned int timeout_seconds, size_t memory_limit) {
    return MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL | MHD_USE_ITC, 0, NULL, NULL,
        handler, context,
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_fd,
        MHD_OPTION_NOTIFY_COMPLETED, completed, context,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
        MHD_OPTION_END);
}

#endif
