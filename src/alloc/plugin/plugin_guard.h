/*
 * plugin_guard.h - a fault barrier around each call into a plug-in.
 *
 * A plug-in is untrusted code in a daemon that holds other people's bytes.
 * A synchronous fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL) or an abort()
 * raised by the thread while it runs plug-in code returns to the barrier
 * instead of killing the process; the caller then retires the plug-in
 * (never calls it again, not even its free: its state may be torn). A
 * fault anywhere else is left to the handler that was there before, or
 * to the default action, as if there were no barrier.
 */
#ifndef NPA_PLUGIN_GUARD_H
#define NPA_PLUGIN_GUARD_H

#include <stdbool.h>

#include "plugin_call.h"

/* Install the handlers, again if another was set since; at each load. */
int plugin_guard_install(void);
/* Run fn(arg) behind the barrier: 0, or -EFAULT with what happened in *f
 * (PLUGIN_END_SIGNAL; addr is si_addr, NULL for abort). */
int plugin_guard_call(void (*fn)(void *arg), void *arg, struct plugin_fault *f);

#endif /* NPA_PLUGIN_GUARD_H */
