/*
 * nodes.h - how each file of the tree is shown (views.c) and stored (ctl.c).
 */
#ifndef NPUMEMFS_NODES_H
#define NPUMEMFS_NODES_H

#include "tree.h"

#define SHOW(name) int name(struct nmfs *d, const struct entry *e, struct sbuf *out)
#define STORE(name)                                                            \
	int name(struct nmfs *d, const struct entry *e, const char *value,     \
		 char *err, size_t errlen)

SHOW(show_readme);
SHOW(show_config);
SHOW(show_log);
SHOW(show_stats);
SHOW(show_stats_json);
SHOW(show_summary);
SHOW(show_snapshot_json);
SHOW(show_memory_allocated);
SHOW(show_max_memory_allocated);
SHOW(show_memory_reserved);
SHOW(show_max_memory_reserved);
SHOW(show_mem_info);
SHOW(show_memory_fraction);
SHOW(show_replay);
SHOW(show_ctl);
SHOW(show_allocator);
SHOW(show_alloc_conf);
SHOW(show_oom);
SHOW(show_prometheus);
SHOW(show_snapshot_pickle);
SHOW(show_record_memory_history);
/* allocators/NAME.deviceN (not a table row: the set of allocators changes). */
int show_allocator_stats(struct nmfs *d, unsigned id, int device,
			 struct sbuf *out);

STORE(store_empty_cache);
STORE(store_reset_peak_stats);
STORE(store_reset_accumulated_stats);
STORE(store_memory_fraction);
STORE(store_replay);
STORE(store_allocator);
STORE(store_alloc_conf);
STORE(store_empty_virt_addr_cache);
STORE(store_record_memory_history);

#endif /* NPUMEMFS_NODES_H */
