/*
 * tree.c - the one table that describes the mount, and paths matched to it.
 */
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "daemon.h"
#include "nodes.h"
#include "open_file.h"
#include "tree.h"

#define DIR_(p) { .path = p, .mode = S_IFDIR | 0755 }
#define RO(p, fn, h) { .path = p, .mode = S_IFREG | 0444, .file = &text_file, .show = fn, .help = h }
#define CTL(p, fn, h, u) CTL_SHOWN(p, show_usage, fn, h, u)
/* A control file that shows more than its usage. */
#define CTL_SHOWN(p, show_fn, store_fn, h, u)                                             \
	{ .path = p, .mode = S_IFREG | 0600, .file = &text_file, .show = show_fn,          \
	  .store = store_fn, .help = h, .usage = u }

static bool unlisted(struct nmfs *d, const struct target *t)
{
	(void)d, (void)t;
	return false;
}

/* Folders come before what they hold; a row matches before the rows
 * below it (so stream1..stream8 are folders, never tensor names). */
static const struct node nodes[] = {
	DIR_("/"),
	{ .path = "/README", .mode = S_IFREG | 0444, .file = &text_file, .constant = true,
	  .show = show_readme, .help = "what every file is (this file)" },
	{ .path = "/config", .mode = S_IFREG | 0444, .file = &text_file, .constant = true,
	  .show = show_config, .help = "the effective configuration, ini text" },
	{ .path = "/log", .mode = S_IFREG | 0444, .file = &log_file,
	  .help = "daemon messages, newest last, stamped with seconds since start (tail -f follows it)" },
	DIR_("/metrics"),
	RO("/metrics/npumemfs.prom", show_prometheus,
	   "memory_stats of every device, Prometheus text (node_exporter textfile collector)"),
	DIR_("/stats"),
	RO("/stats/device{N}", show_stats,
	   "memory_stats(N): \"key value\" lines sorted by key"),
	RO("/stats/device{N}.json", show_stats_json,
	   "memory_stats_as_nested_dict(N) as JSON"),
	DIR_("/summary"),
	RO("/summary/device{N}", show_summary, "memory_summary(N), upstream's text"),
	DIR_("/snapshot"),
	RO("/snapshot/device{N}.json", show_snapshot_json,
	   "memory_snapshot(): segments of device N with their blocks and frames, JSON"),
	RO("/snapshot/device{N}.svg", show_snapshot_svg,
	   "the segments of device N drawn to scale, blocks coloured by state, for a browser"),
	RO("/snapshot/device{N}.history.svg", show_history_svg,
	   "allocated, active and reserved bytes of device N over the last minute, a chart"),
	RO("/snapshot/device{N}.pickle", show_snapshot_pickle,
	   "_snapshot() with device_traces, the pickle memory_viz reads (_dump_snapshot)"),
	DIR_("/snapshot/device{N}.pools"),
	{ .path = "/snapshot/device{N}.pools/{NAME}.json", .mode = S_IFREG | 0444, .file = &text_file,
	  .index = &pool_index, .show = show_pool_snapshot,
	  .help = "memory_snapshot(mempool_id): the segments of one private pool, NAME its id F_S" },
	DIR_("/pools"),
	RO("/pools/device{N}", show_pools,
	   "private pools of device N: id, use_count, freeable, device mallocs, segments, bytes, flags"),
	RO("/pools/device{N}.json", show_pools_json, "the same as JSON"),
	RO("/pools/host", show_host_pools,
	   "private pools of the pinned host allocator: id, use_count, freeable, routing, blocks, bytes"),
	DIR_("/host"),
	RO("/host/stats", show_host_stats,
	   "host_memory_stats(): the pinned host allocator's 28 keys, \"key value\" sorted"),
	RO("/host/stats.json", show_host_stats_json, "host_memory_stats_as_nested_dict() as JSON"),
	RO("/host/blocks", show_host_blocks,
	   "every pinned block: address, size, requested, pool, state, pending events, streams, during capture"),
	DIR_("/pinned"),
	{ .path = "/pinned/{NAME}", .mode = S_IFREG | 0600, .file = &data_file,
	  .index = &pinned_index, .data = &pinned_data,
	  .help = "a pin_memory() tensor as a file: create, truncate -s SIZE, write, read, rm" },
	DIR_("/trace"),
	RO("/trace/device{N}", show_trace,
	   "memory history of device N the ring holds now, JSON lines with frames (trace line or "
	   "file); a read ends, as tracefs trace"),
	/* Unlisted, as /proc's thread ids: a tree walk (find, grep -r, tar,
	 * rsync, cp -r) never meets the one file that waits. */
	{ .path = "/trace_pipe", .mode = S_IFDIR | 0755, .listed = unlisted },
	{ .path = "/trace_pipe/device{N}", .mode = S_IFREG | 0444, .file = &pipe_file,
	  .help = "the same, consumed as read, waiting for new entries (tracefs trace_pipe); "
		  "this folder is not listed in /; with recording off a read fails (ENODATA, logged)" },
	DIR_("/oom"),
	RO("/oom/device{N}", show_oom,
	   "the last out-of-memory report of device N: upstream's text, then why it ran out "
	   "(figures and a verdict); empty until one"),
	DIR_("/devices"),
	DIR_("/devices/device{N}"),
	RO("/devices/device{N}/memory_allocated", show_memory_allocated,
	   "bytes in allocated blocks (memory_allocated(N))"),
	RO("/devices/device{N}/max_memory_allocated", show_max_memory_allocated,
	   "peak of memory_allocated since the last reset_peak_stats"),
	RO("/devices/device{N}/memory_reserved", show_memory_reserved,
	   "bytes the allocator holds from the device (memory_reserved(N))"),
	RO("/devices/device{N}/max_memory_reserved", show_max_memory_reserved,
	   "peak of memory_reserved since the last reset_peak_stats"),
	RO("/devices/device{N}/memory_cached", show_memory_reserved,
	   "old name of memory_reserved"),
	RO("/devices/device{N}/max_memory_cached", show_max_memory_reserved,
	   "old name of max_memory_reserved"),
	RO("/devices/device{N}/mem_info", show_mem_info,
	   "\"free total\" device bytes, as aclrtGetMemInfo"),
	CTL_SHOWN("/devices/device{N}/memory_fraction", show_memory_fraction, store_memory_fraction,
		  "share of the device the allocator may use (set_per_process_memory_fraction)",
		  "a number f with 0 <= f <= 1"),
	DIR_("/tensors"),
	DIR_("/tensors/device{N}"),
	{ .path = "/tensors/device{N}/stream{S}", .mode = S_IFDIR | 0755,
	  .listed = stream_made },
	{ .path = "/tensors/device{N}/stream{S}/{NAME}", .mode = S_IFREG | 0600, .file = &data_file,
	  .index = &tensor_index, .data = &tensor_data,
	  .help = "the same on stream S (1..8): writes during its graph capture are captured" },
	{ .path = "/tensors/device{N}/{NAME}", .mode = S_IFREG | 0600, .file = &data_file,
	  .index = &tensor_index, .data = &tensor_data,
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
	CTL("/ctl/host_empty_cache", store_host_empty_cache,
	    "release the pinned host cache (torch_npu.npu.host_empty_cache())", "1"),
	CTL("/ctl/reset_peak_host_memory_stats", store_reset_peak_host_stats,
	    "host stat peaks restart from the current values", "1"),
	CTL("/ctl/reset_accumulated_host_memory_stats", store_reset_accumulated_host_stats,
	    "host allocated/freed totals and timings restart from 0", "1"),
	CTL("/ctl/copy", store_copy,
	    "non-blocking copy between a pinned tensor and a tensor on a stream "
	    "(dst.copy_(src, non_blocking=True)); the stream's use keeps the pinned block "
	    "until the stream syncs",
	    "'SRC DST': pinned/NAME and tensors/deviceN[/streamS]/NAME, either way round, "
	    "equal sizes"),
	CTL("/ctl/stream_use", store_stream_use,
	    "a tensor's block used on another stream (tensor.record_stream(stream)) or no "
	    "longer (torch_npu.erase_stream(tensor, stream)): once the tensor is freed, a "
	    "recorded block stays active until the work then on that stream is done (a sync)",
	    "'record TENSOR stream=S' or 'erase TENSOR stream=S', TENSOR "
	    "tensors/deviceN[/streamS]/NAME, S 0..8 on the tensor's device"),
	CTL("/ctl/empty_virt_addr_cache", store_empty_virt_addr_cache,
	    "release cached blocks but keep unmapped pages (empty_virt_addr_cache(); needs expandable_segments)",
	    "1 (all devices) or deviceN (one device)"),
	CTL_SHOWN("/ctl/record_memory_history", show_record_memory_history, store_record_memory_history,
		  "memory history recording per device (_record_memory_history()); off by default",
		  "'all [max_entries]' (default 100000), 'state' or 'off'; all devices"),
	CTL_SHOWN("/ctl/alloc_conf", show_alloc_conf, store_alloc_conf,
		  "allocator settings in force: \"key value origin\" (default, ini, cli or write)",
		  "key:value[,key:value...], PYTORCH_NPU_ALLOC_CONF syntax; shaping keys only with no memory held"),
	CTL_SHOWN("/ctl/allocator", show_allocator, store_allocator,
		  "the allocator in use and earlier ones still owning blocks",
		  "'caching', 'PATH ALLOC_FN FREE_FN [HOOK=FN ...]' (a plug-in, made current), "
		  "'load PATH ALLOC_FN FREE_FN [HOOK=FN ...]' (loaded beside it) or "
		  "'unload pluginK'"),
	CTL_SHOWN("/ctl/graph", show_graph, store_graph,
		  "NPUGraphs: name, state, device, stream, pool, capture id, replays, pool bytes",
		  "'create G', 'capture_begin G stream=S [pool=G2|pool=handle:H] "
		  "[mode=global|thread_local|relaxed] [device=D]', 'enter G stream=S [...]' "
		  "(torch.npu.graph's entry: synchronize, empty_cache, host_empty_cache, "
		  "capture_begin), 'capture_end G', "
		  "'replay G [stream=S]', 'reset G' or 'destroy G'"),
	CTL_SHOWN("/ctl/mempool", show_mempool, store_mempool,
		  "MemPools: name, device, pool id, use_count, the stream routed to it, allocator",
		  "'create M [use_on_oom] [no_split] [device=D] [allocator=pluginK]', "
		  "'begin M stream=S', "
		  "'end M', 'release M' or 'empty M'"),
	CTL("/ctl/acl_allocator", store_acl_allocator,
	    "ACL allocators on streams (aclrtAllocatorRegister), as torchair registers torch_npu's",
	    "'register ALLOCATOR stream=S [device=D]' (ALLOCATOR: caching or a loaded pluginK) "
	    "or 'unregister stream=S [device=D]'; runtime_stream=ID (a stream someone else "
	    "made, as acl/allocators lists it) may stand for stream=S"),
	CTL("/ctl/op", store_op,
	    "operators with workspace from their stream's ACL allocator (else the allocator in use)",
	    "'launch stream=S workspace=SIZE [ns=N] [device=D]' (no ns: runs until the stream "
	    "syncs) or 'sync stream=S [device=D]'; runtime_stream=ID (a plug-in's own stream, "
	    "as acl/allocators lists it) may stand for stream=S"),
	DIR_("/acl"),
	RO("/acl/allocators", show_acl_allocators,
	   "ACL allocator registrations per stream: descriptor, object, functions set, "
	   "alloc/free calls, workspace outstanding"),
	DIR_("/allocators"),
	{ .path = "/allocators/{NAME}.device{N}", .mode = S_IFREG | 0444, .file = &text_file,
	  .index = &allocator_index, .show = show_allocator_stats,
	  .help = "memory_stats of one allocator alone: caching (built-in) or pluginK (each loaded plug-in)" },
	DIR_("/workload"),
	CTL_SHOWN("/workload/replay", show_replay, store_replay,
		  "a trace replayed in the background; read: state, progress, last error",
		  "an absolute trace path (once), 'loop PATH' (again and again), 'loop' "
		  "(the last trace again, looping), 'stop' (ends the replay after its current "
		  "event and frees what it holds) or 'start' (the last trace again from its "
		  "start, looping if it looped); a new replay is refused while one runs"),
};

#define NNODES (sizeof(nodes) / sizeof(nodes[0]))

/* "0".."99" without leading zeros, as device names are written. */
static const char *match_device(const char *s, int *device)
{
	if (s[0] < '0' || s[0] > '9')
		return NULL;
	if (s[0] == '0' || s[1] < '0' || s[1] > '9') {
		*device = s[0] - '0';
		return s + 1;
	}
	*device = (s[0] - '0') * 10 + (s[1] - '0');
	return s + 2;
}

/* "1".."8": a stream besides the default one. */
static const char *match_stream(const char *s, int *stream)
{
	if (s[0] < '1' || s[0] > '0' + TREE_STREAMS)
		return NULL;
	*stream = s[0] - '0';
	return s + 1;
}

/*
 * `s` against pattern `p`: literals alike, {N} a device number, {S} a
 * stream number, {NAME}
 * one or more characters other than '/', longest first (so that
 * "a.device1.device0" is NAME "a.device1" on device 0).
 */
static bool match(const char *p, const char *s, struct target *t)
{
	while (*p && *p != '{') {
		if (*p++ != *s++)
			return false;
	}
	if (*p == '\0')
		return *s == '\0';
	if (strncmp(p, "{N}", 3) == 0) {
		s = match_device(s, &t->device);
		return s && match(p + 3, s, t);
	}
	if (strncmp(p, "{S}", 3) == 0) {
		s = match_stream(s, &t->stream);
		return s && match(p + 3, s, t);
	}
	if (strncmp(p, "{NAME}", 6) != 0)
		return false;
	size_t max = strcspn(s, "/");
	for (size_t n = max; n > 0; n--) {
		if (n <= TREE_NAME_MAX && match(p + 6, s + n, t)) {
			memcpy(t->name, s, n);
			t->name[n] = '\0';
			return true;
		}
	}
	return false;
}

/* The indexes matched name things that exist now. */
static int check_indexes(struct nmfs *d, struct target *t, bool creating)
{
	if (t->device >= d->device_count)
		return -ENOENT;
	if (!t->node->index)
		return 0;
	int rc = t->node->index->lookup(d, t);
	return rc == -ENOENT && creating ? 0 : rc;
}

int tree_resolve(struct nmfs *d, const char *path, bool creating,
		 struct target *t)
{
	for (size_t i = 0; i < NNODES; i++) {
		memset(t, 0, sizeof(*t));
		t->device = -1;
		t->node = &nodes[i];
		if (match(nodes[i].path, path, t))
			return check_indexes(d, t, creating);
	}
	return -ENOENT;
}

/* Whether row `child` sits directly inside row `dir`. */
static bool inside(const struct node *child, const struct node *dir)
{
	const char *slash = strrchr(child->path, '/');
	size_t len = (size_t)(slash - child->path);

	if (child == dir)
		return false;
	if (len == 0)
		return strcmp(dir->path, "/") == 0;
	return strlen(dir->path) == len && strncmp(child->path, dir->path, len) == 0;
}

struct listing {
	struct nmfs *d;
	struct target t;
	name_visit_fn fn;
	void *arg;
};

/* The last part of the row's path, for the name and device of `t`. */
static int emit(struct listing *l)
{
	char path[PATH_MAX];

	tree_path(&l->t, path, sizeof(path));
	return l->fn(l->arg, strrchr(path, '/') + 1);
}

static int emit_named(void *arg, const char *name)
{
	struct listing *l = arg;

	snprintf(l->t.name, sizeof(l->t.name), "%s", name);
	return emit(l);
}

/* Each name the row's index lists, or the row's one name if listed. */
static int list_names(struct listing *l)
{
	if (l->t.node->listed && !l->t.node->listed(l->d, &l->t))
		return 0;
	if (!l->t.node->index)
		return emit(l);
	return l->t.node->index->list(l->d, &l->t, emit_named, l);
}

/* A row's files for one device: a stream number fixed by the folder, or
 * each stream's when the row's last part has {S}. */
static int list_streams(struct listing *l, const struct target *dir, bool per_stream)
{
	int rc = 0;

	if (!per_stream) {
		l->t.stream = dir->stream;
		return list_names(l);
	}
	for (int s = 1; s <= TREE_STREAMS && !rc; s++) {
		l->t.stream = s;
		rc = list_names(l);
	}
	return rc;
}

/* A row's files in one folder: a device number fixed by the folder or
 * each device's, then each stream's, then each name its index lists. */
static int list_row(struct listing *l, const struct target *dir)
{
	const char *last = strrchr(l->t.node->path, '/');
	bool per_device = strstr(last, "{N}") != NULL;
	bool per_stream = strstr(last, "{S}") != NULL;
	int rc = 0;

	for (int dev = 0; dev < l->d->device_count && !rc; dev++) {
		l->t.device = per_device ? dev : dir->device;
		rc = list_streams(l, dir, per_stream);
		if (!per_device)
			break;
	}
	return rc;
}

int tree_list(struct nmfs *d, const struct target *dir, name_visit_fn fn,
	      void *arg)
{
	struct listing l = { .d = d, .fn = fn, .arg = arg };
	int rc = 0;

	for (size_t i = 0; i < NNODES && !rc; i++) {
		if (!inside(&nodes[i], dir->node))
			continue;
		memset(&l.t, 0, sizeof(l.t));
		l.t.node = &nodes[i];
		rc = list_row(&l, dir);
	}
	return rc;
}

/* What each index of a path is written as. */
struct fill {
	const char *n, *s, *name;
};

/* Copy `p` into buf with {N}, {S} and {NAME} replaced. */
static void fill_in(const char *p, const struct fill *f, char *buf, size_t len)
{
	size_t o = 0;

	while (*p && o + 1 < len) {
		const char *with = NULL;
		if (strncmp(p, "{N}", 3) == 0)
			with = f->n, p += 3;
		else if (strncmp(p, "{S}", 3) == 0)
			with = f->s, p += 3;
		else if (strncmp(p, "{NAME}", 6) == 0)
			with = f->name, p += 6;
		if (!with) {
			buf[o++] = *p++;
			continue;
		}
		o += (size_t)snprintf(buf + o, len - o, "%s", with);
		if (o >= len)
			o = len - 1;
	}
	buf[o] = '\0';
}

void tree_path(const struct target *t, char *buf, size_t len)
{
	char n[16], s[16];

	snprintf(n, sizeof(n), "%d", t->device);
	snprintf(s, sizeof(s), "%d", t->stream);
	fill_in(t->node->path, &(struct fill){ n, s, t->name }, buf, len);
}

int tree_format_readme(struct sbuf *out)
{
	for (size_t i = 0; i < NNODES; i++) {
		const struct node *n = &nodes[i];
		char name[128];

		if (!n->help)
			continue;
		fill_in(n->path + 1, &(struct fill){ "N", "S", "NAME" }, name, sizeof(name));
		sbuf_printf(out, "%-36s %04o  %s\n", name, (unsigned)(n->mode & 07777), n->help);
		if (n->usage)
			sbuf_printf(out, "%-36s       write: %s\n", "", n->usage);
	}
	return out->error;
}

struct tree_error {
	struct { const struct node *node; int device; } key;
	char msg[TREE_ERRLEN];
	UT_hash_handle hh;
};

void tree_errors_init(struct tree_errors *te)
{
	pthread_mutex_init(&te->lock, NULL);
	te->by_key = NULL;
}

void tree_errors_release(struct tree_errors *te)
{
	struct tree_error *e, *tmp;

	HASH_ITER(hh, te->by_key, e, tmp) {
		HASH_DEL(te->by_key, e);
		free(e);
	}
	pthread_mutex_destroy(&te->lock);
}

static struct tree_error *find_error(struct tree_errors *te, const struct target *t)
{
	struct tree_error probe, *e;

	memset(&probe, 0, sizeof(probe));
	probe.key.node = t->node;
	probe.key.device = t->device;
	HASH_FIND(hh, te->by_key, &probe.key, sizeof(probe.key), e);
	return e;
}

void tree_set_error(struct tree_errors *te, const struct target *t, const char *msg)
{
	pthread_mutex_lock(&te->lock);
	struct tree_error *e = find_error(te, t);
	if (!e && (e = calloc(1, sizeof(*e)))) {
		e->key.node = t->node;
		e->key.device = t->device;
		HASH_ADD(hh, te->by_key, key, sizeof(e->key), e);
	}
	if (e) {
		snprintf(e->msg, sizeof(e->msg), "%s", msg);
		dlog_flatten(e->msg);
	}
	pthread_mutex_unlock(&te->lock);
}

void tree_get_error(struct tree_errors *te, const struct target *t, char *buf,
		    size_t len)
{
	pthread_mutex_lock(&te->lock);
	struct tree_error *e = find_error(te, t);
	snprintf(buf, len, "%s", e && e->msg[0] ? e->msg : "none");
	pthread_mutex_unlock(&te->lock);
}
