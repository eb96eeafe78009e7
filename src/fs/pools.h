/*
 * pools.h - what ctl/graph, ctl/mempool and the pools/ files share about
 * private pools (pool_files.c).
 */
#ifndef NPUMEMFS_POOLS_H
#define NPUMEMFS_POOLS_H

#include <stdbool.h>
#include <stddef.h>

#include "alloc/device/mempool.h"

struct nmfs;

/* Pool `id` of `device` as pools/deviceN shows it (a plug-in's row, if it
 * was asked to route the pool, over the caching allocator's); -ENOENT
 * when it is gone. */
int pool_find(struct nmfs *d, int device, struct npa_pool_id id,
	      struct npa_pool_info *out);
/* "F_S" back to an id; false when `name` is not two numbers so joined. */
bool pool_parse_name(const char *name, struct npa_pool_id *id);

#endif /* NPUMEMFS_POOLS_H */
