/*
 * pools.h - what ctl/graph, ctl/mempool and the pools/ files share about
 * the built-in allocator's private pools (pool_files.c).
 */
#ifndef NPUMEMFS_POOLS_H
#define NPUMEMFS_POOLS_H

#include <stdbool.h>
#include <stddef.h>

#include "alloc/device/mempool.h"

struct nmfs;

/* Pool `id` of `device` as npa_pool_list shows it; -ENOENT when it is gone. */
int pool_find(struct nmfs *d, int device, struct npa_pool_id id,
	      struct npa_pool_info *out);
/* "F_S" back to an id; false when `name` is not two numbers so joined. */
bool pool_parse_name(const char *name, struct npa_pool_id *id);
/*
 * Graphs and pools are the built-in allocator's: while a plug-in is
 * current, `what` is refused with -EBUSY and a sentence saying so.
 */
int pool_need_caching(struct nmfs *d, const char *what, char *err, size_t errlen);

#endif /* NPUMEMFS_POOLS_H */
