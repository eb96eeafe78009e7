/*
 * plugin_host.h - a plug-in run in a process of its own.
 *
 * The daemon holds other people's bytes; a plug-in is code that may not
 * work yet. So a plug-in loaded with isolation runs in a host process
 * (npumem-plugin-host) that the daemon starts, and every call into it is
 * a message (plugin_wire.h). A fault, an exit, a stack overflow, a thread
 * of its own that crashes, a fork or a call that never returns ends the
 * host, not the daemon: the call in flight fails, and the death is told
 * once to whoever asked (plugin_host_set_on_death). The device memory it
 * allocates is the simulator's, in the daemon, through the ACL calls the
 * host forwards; the daemon checks every handle and range in them against
 * what the host was given.
 */
#ifndef NPA_PLUGIN_HOST_H
#define NPA_PLUGIN_HOST_H

#include <stdbool.h>
#include <stddef.h>

#include "plugin_call.h"

struct plugin_host;

/* Default bound on one call: long enough for any real allocator. */
#define PLUGIN_TIMEOUT_MS_DEFAULT 5000u

/*
 * Start a host for the object open at object_fd (already checked by the
 * trust rules) and load it with the functions `spec_line` names. -ENOENT
 * when the host program is missing, -EINVAL/-ENOEXEC as plugin_open for
 * what the host's loader refused, -EFAULT when the host died loading.
 */
struct plugin_isolation;
int plugin_host_start(const struct plugin_isolation *iso, int object_fd, const char *spec_line,
		      struct plugin_host **out, char *err, size_t errlen);
/* Run c in the host: 0, -EIO when the host is gone already, -EFAULT when
 * it died or overran the bound during this call (what happened in *f). */
int plugin_host_call(struct plugin_host *h, struct plugin_call *c, struct plugin_fault *f);
/* Told once when the host ends while no plug-in call saw it: from the
 * watcher (where: PLUGIN_FN_THREAD) or from a descriptor's trampoline
 * (PLUGIN_FN_DESC); fn must not wait for anything plugin_host_stop holds. */
void plugin_host_set_on_death(struct plugin_host *h,
			      void (*fn)(void *arg, enum plugin_fn where), void *arg);
/* Whether the host is gone, and how it ended. */
bool plugin_host_ended(struct plugin_host *h, struct plugin_fault *f);
/* End the host (its threads and children with it) and free everything. */
void plugin_host_stop(struct plugin_host *h);
/* Whether code is one of the functions this host's descriptors run
 * through, called with one of its descriptors' objects (obj). */
bool plugin_host_owns_function(struct plugin_host *h, const void *obj, const void *code);
/* The host program next to the running one, or $NPUMEMFS_PLUGIN_HOST. */
int plugin_host_default_path(char *buf, size_t len);

#endif /* NPA_PLUGIN_HOST_H */
