/*
 * nodes.h - what the rows of the tree (tree.c) call: how each file is
 * shown (views.c, history_files.c), how a write is stored (ctl.c), and the
 * indexes and data of the folders whose files come and go (indexes.c,
 * tensor_files.c).
 */
#ifndef NPUMEMFS_NODES_H
#define NPUMEMFS_NODES_H

#include "tree.h"

/* views.c */
int show_readme(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_config(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_stats(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_stats_json(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_summary(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_snapshot_json(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_snapshot_svg(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_history_svg(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_memory_allocated(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_max_memory_allocated(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_memory_reserved(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_max_memory_reserved(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_mem_info(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_memory_fraction(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_replay(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_allocator(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_allocator_stats(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_alloc_conf(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_oom(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_prometheus(struct nmfs *d, const struct target *t, struct sbuf *out);

/* history_files.c */
int show_trace(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_snapshot_pickle(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_record_memory_history(struct nmfs *d, const struct target *t,
			       struct sbuf *out);
int store_record_memory_history(struct nmfs *d, const struct target *t,
				const char *value, uid_t caller, char *err,
				size_t errlen);

/* ctl.c */
/* The "usage: ..." and "last_error: ..." lines that end every ctl file,
 * and all that a ctl file with nothing else to show shows. */
int show_usage(struct nmfs *d, const struct target *t, struct sbuf *out);
int store_empty_cache(struct nmfs *d, const struct target *t, const char *value,
		      uid_t caller, char *err, size_t errlen);
int store_reset_peak_stats(struct nmfs *d, const struct target *t,
			   const char *value, uid_t caller, char *err,
			   size_t errlen);
int store_reset_accumulated_stats(struct nmfs *d, const struct target *t,
				  const char *value, uid_t caller, char *err,
				  size_t errlen);
int store_memory_fraction(struct nmfs *d, const struct target *t,
			  const char *value, uid_t caller, char *err,
			  size_t errlen);
int store_replay(struct nmfs *d, const struct target *t, const char *value,
		 uid_t caller, char *err, size_t errlen);
int store_allocator(struct nmfs *d, const struct target *t, const char *value,
		    uid_t caller, char *err, size_t errlen);
int store_alloc_conf(struct nmfs *d, const struct target *t, const char *value,
		     uid_t caller, char *err, size_t errlen);
int store_empty_virt_addr_cache(struct nmfs *d, const struct target *t,
				const char *value, uid_t caller, char *err,
				size_t errlen);

/* graphs.c: ctl/graph. */
int show_graph(struct nmfs *d, const struct target *t, struct sbuf *out);
int store_graph(struct nmfs *d, const struct target *t, const char *value,
		uid_t caller, char *err, size_t errlen);

/* mempools.c: ctl/mempool. */
int show_mempool(struct nmfs *d, const struct target *t, struct sbuf *out);
int store_mempool(struct nmfs *d, const struct target *t, const char *value,
		  uid_t caller, char *err, size_t errlen);

/* pool_files.c: pools/deviceN[.json], snapshot/deviceN.pools/NAME.json
 * (NAME a pool id "F_S", pool_index), and the pool gauges of the metrics. */
int show_pools(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_pools_json(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_pool_snapshot(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_pool_metrics(struct nmfs *d, struct sbuf *out);
extern const struct node_index pool_index;

/* acl_files.c: acl/allocators, ctl/acl_allocator, ctl/op. */
int show_acl_allocators(struct nmfs *d, const struct target *t, struct sbuf *out);
int store_acl_allocator(struct nmfs *d, const struct target *t, const char *value,
			uid_t caller, char *err, size_t errlen);
int store_op(struct nmfs *d, const struct target *t, const char *value, uid_t caller,
	     char *err, size_t errlen);

/* indexes.c: the {NAME}s of tensors/deviceN/[streamS/] and allocators/. */
extern const struct node_index tensor_index;
extern const struct node_index allocator_index;

/* tensor_files.c: tensors/deviceN/NAME and tensors/deviceN/streamS/NAME;
 * a stream's folder is listed once the stream is made. */
bool stream_made(struct nmfs *d, const struct target *t);
extern const struct data_ops tensor_data;

/* host_files.c: the pinned host allocator. */
int show_host_stats(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_host_stats_json(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_host_blocks(struct nmfs *d, const struct target *t, struct sbuf *out);
int show_host_pools(struct nmfs *d, const struct target *t, struct sbuf *out);
/* host_memory_stats as Prometheus text, after the devices' (show_prometheus). */
int show_host_metrics(struct nmfs *d, struct sbuf *out);
int store_host_empty_cache(struct nmfs *d, const struct target *t, const char *value,
			   uid_t caller, char *err, size_t errlen);
int store_reset_peak_host_stats(struct nmfs *d, const struct target *t, const char *value,
				uid_t caller, char *err, size_t errlen);
int store_reset_accumulated_host_stats(struct nmfs *d, const struct target *t,
				       const char *value, uid_t caller, char *err, size_t errlen);
extern const struct node_index pinned_index;
extern const struct data_ops pinned_data;

/* copy_files.c: ctl/copy, non-blocking copies between pinned and device tensors. */
int store_copy(struct nmfs *d, const struct target *t, const char *value, uid_t caller,
	       char *err, size_t errlen);
/* A file a ctl write names, "pinned/p" or "/pinned/p": tree_resolve's result. */
int resolve_written(struct nmfs *d, const char *word, struct target *t);
/* stream_use_files.c: ctl/stream_use, record_stream and erase_stream of a tensor. */
int store_stream_use(struct nmfs *d, const struct target *t, const char *value,
		     uid_t caller, char *err, size_t errlen);

#endif /* NPUMEMFS_NODES_H */
