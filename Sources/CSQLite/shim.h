#ifndef STATEBUS_CSQLITE_SHIM_H
#define STATEBUS_CSQLITE_SHIM_H
#include <sqlite3.h>
#include <sys/file.h>

/* SQLITE_TRANSIENT is a cast macro Swift cannot import: bind copies of our buffers. */
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }
#endif
