/*
 * snapshot_input.h - a memory snapshot (what _dump_snapshot wrote) read
 * as a trace, converted on the way by contrib/snapshot2trace, the one
 * converter the project has: the rows a pickle gives are then those of
 * the trace a user would convert by hand. The converter is Python's own
 * pickle reader with every global refused; a second reader in C would be
 * a second place for a malicious pickle to get through.
 */
#ifndef NPUMEMFS_SNAPSHOT_INPUT_H
#define NPUMEMFS_SNAPSHOT_INPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "workload/trace.h"

/* Whether `path` holds a snapshot (a pickle, or its JSON) rather than a
 * trace: by its first byte, which no trace line starts with. */
bool snapshot_input_is_snapshot(const char *path);
/*
 * Convert and parse: 0, or -EINVAL with the reason in err (the
 * converter's own message went to standard error), or another -errno.
 * The converter is $NPUMEM_SNAPSHOT2TRACE, else the installed one, else
 * the source tree's; run by $PYTHON, else python3.
 */
int snapshot_input_load(const char *path, struct wl_trace **out, char *err, size_t errlen);

#endif /* NPUMEMFS_SNAPSHOT_INPUT_H */
