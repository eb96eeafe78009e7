/*
 * tree.c - the one table that describes the mount.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_log.h"
#include "nodes.h"
#include "tree.h"

#define DIR_(p) { .path = p, .kind = NODE_DIR, .mode = 0755 }
#define DEV_DIR(p) { .path = p, .kind = NODE_DIR, .mode = 0755, .per_device = true }
#define RO(p, fn, h) { .path = p, .kind = NODE_FILE, .mode = 0444, .per_device = true, .show = fn, .help = h }
#define CTL(p, fn, h, u) { .path = p, .kind = NODE_FILE, .mode = 0600, .show = show_ctl, .store = fn, .help = h, .usage = u }

/* Directories come before what they hold. */
static const struct node nodes[] = {
	DIR_("/"),
	{ .path = "/README", .kind = NODE_FILE, .mode = 0444, .constant = true,
	  .show = show_readme, .help = "what every file is (this file)" },
	{ .path = "/config", .kind = NODE_FILE, .mode = 0444, .constant = true,
	  .show = show_config, .help = "the effective configuration, ini text" },
	{ .path = "/log", .kind = NODE_FILE, .mode = 0444, .show = show_log,
	  .help = "daemon messages, newest last, stamped with seconds since start" },
	DIR_("/metrics"),
	{ .path = "/metrics/npumemfs.prom", .kind = NODE_FILE, .mode = 0444,
	  .show = show_prometheus,
	  .help = "memory_stats of every device, Prometheus text (node_exporter textfile collector)" },
	DIR_("/stats"),
	RO("/stats/device%d", show_stats,
	   "memory_stats(N): \"key value\" lines sorted by key"),
	RO("/stats/device%d.json", show_stats_json,
	   "memory_stats_as_nested_dict(N) as JSON"),
	DIR_("/summary"),
	RO("/summary/device%d", show_summary, "memory_summary(N), upstream's text"),
	DIR_("/snapshot"),
	RO("/snapshot/device%d.json", show_snapshot_json,
	   "memory_snapshot(): segments of device N with their blocks, JSON"),
	RO("/snapshot/device%d.pickle", show_snapshot_pickle,
	   "_snapshot() with device_traces, the pickle memory_viz reads (_dump_snapshot)"),
	DIR_("/trace"),
	{ .path = "/trace/device%d", .kind = NODE_FILE, .mode = 0444, .per_device = true,
	  .pipe = true,
	  .help = "memory history of device N as JSON lines; a read waits for new ones (trace_pipe)" },
	DIR_("/oom"),
	RO("/oom/device%d", show_oom,
	   "the last out-of-memory report of device N, upstream's text; empty until one"),
	DIR_("/devices"),
	DEV_DIR("/devices/device%d"),
	RO("/devices/device%d/memory_allocated", show_memory_allocated,
	   "bytes in allocated blocks (memory_allocated(N))"),
	RO("/devices/device%d/max_memory_allocated", show_max_memory_allocated,
	   "peak of memory_allocated since the last reset_peak_stats"),
	RO("/devices/device%d/memory_reserved", show_memory_reserved,
	   "bytes the allocator holds from the device (memory_reserved(N))"),
	RO("/devices/device%d/max_memory_reserved", show_max_memory_reserved,
	   "peak of memory_reserved since the last reset_peak_stats"),
	RO("/devices/device%d/memory_cached", show_memory_reserved,
	   "old name of memory_reserved"),
	RO("/devices/device%d/max_memory_cached", show_max_memory_reserved,
	   "old name of max_memory_reserved"),
	RO("/devices/device%d/mem_info", show_mem_info,
	   "\"free total\" device bytes, as aclrtGetMemInfo"),
	{ .path = "/devices/device%d/memory_fraction", .kind = NODE_FILE,
	  .mode = 0600, .per_device = true, .show = show_memory_fraction,
	  .store = store_memory_fraction,
	  .help = "share of the device the allocator may use (set_per_process_memory_fraction)",
	  .usage = "a number f with 0 < f <= 1" },
	DIR_("/tensors"),
	{ .path = "/tensors/device%d", .kind = NODE_TENSOR_DIR, .mode = 0755,
	  .per_device = true,
	  .help = "an allocation as a file: create, truncate -s SIZE, write, read, rm" },
	DIR_("/ctl"),
	CTL("/ctl/empty_cache", store_empty_cache,
	    "release every unused cached block (empty_cache())",
	    "1 (all devices) or deviceN (one device)"),
	CTL("/ctl/reset_peak_stats", store_reset_peak_stats,
	    "peaks restart from the current values (reset_peak_memory_stats())",
	    "1 (all devices) or deviceN (one device)"),
	CTL("/ctl/reset_accumulated_stats", store_reset_accumulated_stats,
	    "allocated/freed totals restart from 0 (reset_accumulated_memory_stats())",
	    "1 (all devices) or deviceN (one device)"),
	CTL("/ctl/empty_virt_addr_cache", store_empty_virt_addr_cache,
	    "release cached blocks but keep unmapped pages (empty_virt_addr_cache(); needs expandable_segments)",
	    "1 (all devices) or deviceN (one device)"),
	{ .path = "/ctl/record_memory_history", .kind = NODE_FILE, .mode = 0600,
	  .show = show_record_memory_history, .store = store_record_memory_history,
	  .help = "memory history recording per device (_record_memory_history()); off by default",
	  .usage = "'all [max_entries]' (default 100000), 'state' or 'off'; all devices" },
	{ .path = "/ctl/alloc_conf", .kind = NODE_FILE, .mode = 0600,
	  .show = show_alloc_conf, .store = store_alloc_conf,
	  .help = "allocator settings in force: \"key value origin\" (default, ini, cli or write)",
	  .usage = "key:value[,key:value...], PYTORCH_NPU_ALLOC_CONF syntax; shaping keys only with no memory held" },
	{ .path = "/ctl/allocator", .kind = NODE_FILE, .mode = 0600,
	  .show = show_allocator, .store = store_allocator,
	  .help = "the allocator in use and earlier ones still owning blocks",
	  .usage = "'caching', or 'PATH ALLOC_FN FREE_FN [HOOK=FN ...]' (a plug-in)" },
	{ .path = "/allocators", .kind = NODE_ALLOCATORS_DIR, .mode = 0755,
	  .help = "memory_stats of the built-in allocator alone; pluginK.deviceN: of each loaded plug-in" },
	DIR_("/workload"),
	{ .path = "/workload/replay", .kind = NODE_FILE, .mode = 0600,
	  .show = show_replay, .store = store_replay,
	  .help = "a trace replayed in the background; read: state, progress, last error",
	  .usage = "an absolute trace path (refused while a replay runs)" },
};

#define NNODES (sizeof(nodes) / sizeof(nodes[0]))

static void fill(struct entry *e, const struct node *n, int device)
{
	char *slash;

	snprintf(e->path, sizeof(e->path), n->path, device);
	snprintf(e->parent, sizeof(e->parent), "%s", e->path);
	slash = strrchr(e->parent, '/');
	if (slash == e->parent && e->path[1])
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	e->name = strrchr(e->path, '/') + 1;
	e->node = n;
	e->device = n->per_device ? device : -1;
}

int tree_build(struct tree *t, int device_count)
{
	size_t count = 0;

	for (size_t i = 0; i < NNODES; i++)
		count += nodes[i].per_device ? (size_t)device_count : 1;
	memset(t, 0, sizeof(*t));
	t->entries = calloc(count, sizeof(*t->entries));
	if (!t->entries)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	for (size_t i = 0; i < NNODES; i++) {
		int n = nodes[i].per_device ? device_count : 1;
		for (int dev = 0; dev < n; dev++) {
			struct entry *e = &t->entries[t->count++];
			fill(e, &nodes[i], dev);
			HASH_ADD_STR(t->by_path, path, e);
		}
	}
	return 0;
}

void tree_release(struct tree *t)
{
	HASH_CLEAR(hh, t->by_path);
	free(t->entries);
	pthread_mutex_destroy(&t->lock);
	memset(t, 0, sizeof(*t));
}

const struct entry *tree_find(const struct tree *t, const char *path)
{
	struct entry *e;

	HASH_FIND_STR(t->by_path, path, e);
	return e;
}

int tree_children(const struct tree *t, const char *dir, tree_visit_fn fn,
		  void *arg)
{
	for (size_t i = 1; i < t->count; i++) {
		const struct entry *e = &t->entries[i];
		if (strcmp(e->parent, dir) != 0)
			continue;
		int rc = fn(arg, e);
		if (rc)
			return rc;
	}
	return 0;
}

void tree_set_error(struct tree *t, const struct entry *e, const char *msg)
{
	pthread_mutex_lock(&t->lock);
	snprintf(((struct entry *)e)->last_error, TREE_ERRLEN, "%s", msg);
	dlog_flatten(((struct entry *)e)->last_error);
	pthread_mutex_unlock(&t->lock);
}

void tree_get_error(struct tree *t, const struct entry *e, char *buf, size_t len)
{
	pthread_mutex_lock(&t->lock);
	snprintf(buf, len, "%s", e->last_error[0] ? e->last_error : "none");
	pthread_mutex_unlock(&t->lock);
}

int tree_format_readme(struct sbuf *out)
{
	for (size_t i = 0; i < NNODES; i++) {
		const struct node *n = &nodes[i];
		char name[64], *p;

		if (!n->help)
			continue;
		snprintf(name, sizeof(name), "%s%s", n->path + 1,
			 n->kind == NODE_FILE ? ""
			 : n->kind == NODE_ALLOCATORS_DIR ? "/caching.deviceN"
							  : "/NAME");
		p = strstr(name, "%d");
		if (p)
			memmove(p + 1, p + 2, strlen(p + 2) + 1), *p = 'N';
		/* A tensor directory's help is about the tensors in it. */
		mode_t mode = n->kind == NODE_TENSOR_DIR ? 0600
			    : n->kind == NODE_ALLOCATORS_DIR ? 0444 : n->mode;
		sbuf_printf(out, "%-36s %04o  %s\n", name, (unsigned)mode, n->help);
		if (n->usage)
			sbuf_printf(out, "%-36s       write: %s\n", "", n->usage);
	}
	return out->error;
}
