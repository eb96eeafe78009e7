/*
 * fuzz_alloc_ops.c - the caching allocator driven by arbitrary operation
 * sequences on a small simulated device.
 *
 * The input's first byte picks the flavor and whether expandable segments
 * start on; each later op is an opcode byte and its argument bytes. Ops
 * are malloc, free, record_stream, stream work, clock and synchronize,
 * empty_cache, empty_virt_addr_cache, run-time alloc_conf changes, memory
 * fraction, stat resets, snapshots, memory history, injected device
 * malloc faults, and private pools (create, route a stream's allocations
 * to one, end routing, release, empty one, use_on_oom, no_split).
 * When the first byte's bits 3 to 5 are 011 (a pattern the older seeds
 * never had, so they keep their paths), pinned host ops join in: pin,
 * unpin, a stream's use of a pinned block, host_empty_cache, host stat
 * resets, the pinned thresholds, and host private pools; bit 6 picks the
 * pin_memory_expandable_segments variant. npa_host_check must hold too.
 *
 * After every op npa_check must hold (every stat recomputed from the
 * blocks). Every live block carries a tag at both ends, written through
 * aclrtMemcpy, that must read back unchanged when the block is freed: no
 * op may move or lose a live block's bytes. A refused alloc_conf write
 * must leave the settings as they were. At the end every block is freed,
 * the cache emptied, and the device must have all its memory back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acl/acl_rt.h>
#include "alloc/conf/alloc_conf.h"
#include "alloc/caching/caching_allocator.h"
#include "alloc/host/host_allocator.h"
#include "alloc/device/mempool.h"
#include <npumemfs/npusim.h>
#include "alloc/core/snapshot.h"

#define MiB ((size_t)1 << 20)
#define CAPACITY (160 * MiB)
#define SLOTS 48
#define STREAMS 3
#define POOLS 3
#define HOST_CAPACITY (256 * MiB)

/* Settings a user may write at run time; some are refused while blocks
 * are live or in combination, which is part of what is fuzzed. */
static const char *const conf_writes[] = {
	"expandable_segments:True",
	"expandable_segments:False",
	"max_split_size_mb:20",
	"max_split_size_mb:200",
	"garbage_collection_threshold:0.6",
	"garbage_collection_threshold:0.95",
	"roundup_power2_divisions:4",
	"roundup_power2_divisions:[1:2,4:8,>:1]",
	"max_non_split_rounding_mb:40",
	"large_segment_size_mb:40",
	"max_split_size_mb:40,garbage_collection_threshold:0.5",
	"expandable_segments:True,roundup_power2_divisions:2",
	/* torch_npu's own keys; the cuda flavor refuses them. */
	"throw_on_npumalloc_oom:True",
	"throw_on_npumalloc_oom:False",
	"per_process_memory_fraction:0.5",
	"segment_size_mb:40",
	"base_addr_aligned_kb:2",
};

struct slot {
	void *ptr;
	size_t size;
	uint64_t tag;
};

struct run {
	struct npa *a;
	aclrtStream streams[STREAMS];
	struct slot slots[SLOTS];
	struct slot pinned[SLOTS];
	struct npa_pool_id pools[POOLS];
	uint64_t next_tag;
	const uint8_t *in;
	size_t len, pos;
	char err[NPA_ERRLEN];
};

static void die(const struct run *r, const char *what)
{
	fprintf(stderr, "fuzz_alloc_ops: %s (input byte %zu): %s\n", what,
		r->pos, r->err);
	abort();
}

static unsigned byte(struct run *r)
{
	return r->pos < r->len ? r->in[r->pos++] : 0;
}

static aclrtStream stream_arg(struct run *r)
{
	return r->streams[byte(r) % STREAMS];
}

/* Mostly small, some medium, a few large: every pool and segment kind. */
static size_t size_arg(struct run *r)
{
	unsigned kind = byte(r) % 8;
	size_t hi = byte(r);
	size_t v = hi << 8 | byte(r);

	if (kind < 5)
		return 1 + v * 16;                    /* up to 1 MiB */
	if (kind < 7)
		return 1 + v * 160;                   /* up to 10 MiB */
	return 10 * MiB + v * 800;                    /* up to 60 MiB */
}

static void tag_bytes(const struct slot *s, uint8_t out[16])
{
	for (int i = 0; i < 16; i++)
		out[i] = (uint8_t)(s->tag >> (8 * (i % 8))) ^ (uint8_t)i;
}

/* Where the tag goes: 16 bytes at both ends, or the start alone when the
 * two would overlap. */
static size_t tag_len(const struct slot *s)
{
	return s->size < 16 ? s->size : 16;
}

static uint8_t *tag_end(const struct slot *s)
{
	return (uint8_t *)s->ptr + (s->size < 32 ? 0 : s->size - 16);
}

static void write_tags(struct run *r, const struct slot *s)
{
	uint8_t tag[16];
	size_t n = tag_len(s);
	uint8_t *end = tag_end(s);

	tag_bytes(s, tag);
	if (aclrtMemcpy(s->ptr, n, tag, n, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS ||
	    aclrtMemcpy(end, n, tag, n, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS)
		die(r, "aclrtMemcpy to a live block failed");
}

static void check_tags(struct run *r, const struct slot *s)
{
	uint8_t tag[16], head[16], tail[16];
	size_t n = tag_len(s);
	uint8_t *end = tag_end(s);

	tag_bytes(s, tag);
	if (aclrtMemcpy(head, n, s->ptr, n, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS ||
	    aclrtMemcpy(tail, n, end, n, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS)
		die(r, "aclrtMemcpy from a live block failed");
	if (memcmp(head, tag, n) || memcmp(tail, tag, n))
		die(r, "a live block's bytes changed");
}

static void op_malloc(struct run *r)
{
	struct slot *s = &r->slots[byte(r) % SLOTS];
	size_t size = size_arg(r);
	aclrtStream stream = stream_arg(r);

	if (s->ptr)
		return;
	int rc = npa_malloc(r->a, 0, size, stream, &s->ptr, r->err, sizeof(r->err));
	if (rc == -ENOMEM) {
		if (s->ptr || !r->err[0])
			die(r, "an OOM without its message, or with a pointer");
		return;
	}
	if (rc || !s->ptr)
		die(r, "npa_malloc failed other than by OOM");
	if (npa_block_size(r->a, s->ptr) < size)
		die(r, "block smaller than the request");
	s->size = size;
	s->tag = ++r->next_tag;
	write_tags(r, s);
}

static void free_slot(struct run *r, struct slot *s)
{
	check_tags(r, s);
	if (npa_free(r->a, s->ptr, r->err, sizeof(r->err)))
		die(r, "npa_free of a live block failed");
	s->ptr = NULL;
}

static void op_free(struct run *r)
{
	struct slot *s = &r->slots[byte(r) % SLOTS];

	if (s->ptr)
		free_slot(r, s);
}

static void op_record_stream(struct run *r)
{
	struct slot *s = &r->slots[byte(r) % SLOTS];
	aclrtStream stream = stream_arg(r);

	if (s->ptr && npa_record_stream(r->a, s->ptr, stream))
		die(r, "record_stream of a live block failed");
}

static void op_work(struct run *r)
{
	aclrtStream stream = stream_arg(r);

	if (byte(r) % 4 == 0)
		npusim_launch_open(stream);
	else
		npusim_launch(stream, 1000 * (byte(r) + 1));
}

static void op_clock(struct run *r)
{
	unsigned k = byte(r) % 3;

	if (k == 0)
		npusim_advance_ns(10000 * (byte(r) + 1));
	else if (k == 1)
		aclrtSynchronizeStream(stream_arg(r));
	else
		aclrtSynchronizeDevice();
}

static void op_set_conf(struct run *r)
{
	const char *s = conf_writes[byte(r) % (sizeof(conf_writes) / sizeof(conf_writes[0]))];
	struct npa_conf before, after;

	npa_get_conf(r->a, &before);
	r->err[0] = '\0';
	int rc = npa_set_conf(r->a, s, NPA_ORIGIN_WRITE, r->err, sizeof(r->err));
	if (rc == 0)
		return;
	npa_get_conf(r->a, &after);
	if ((rc != -EBUSY && rc != -EINVAL) || !r->err[0])
		die(r, "a refused alloc_conf write without a reason");
	if (npa_conf_diff(&before, &after, NULL, 0) != 0)
		die(r, "a refused alloc_conf write changed the settings");
}

static void op_snapshot(struct run *r)
{
	struct npa_snapshot snap;

	if (npa_snapshot(r->a, 0, &snap))
		die(r, "npa_snapshot failed");
	npa_snapshot_release(&snap);
}

/* Memory history on or off (a small ring, so it wraps), or a copy of it. */
static void op_history(struct run *r)
{
	unsigned k = byte(r) % 4;
	struct npa_trace trace;

	if (k == 0)
		npa_record_memory_history(r->a, 0, NULL, 0);
	else if (k == 1)
		npa_record_memory_history(r->a, 0, "all", 1 + byte(r) % 64);
	else if (k == 2)
		npa_record_memory_history(r->a, 0, "state", 16);
	else if (npa_history_copy(r->a, 0, 0, &trace) == 0)
		npa_trace_release(&trace);
	else
		die(r, "npa_history_copy failed");
}

static void op_misc(struct run *r)
{
	unsigned k = byte(r) % 6;

	if (k == 0)
		npa_empty_cache(r->a, 0);
	else if (k == 1)
		npa_empty_virt_addr_cache(r->a, 0, r->err, sizeof(r->err));
	else if (k == 2)
		npa_set_memory_fraction(r->a, 0, 0.25 + (byte(r) % 4) * 0.25,
					r->err, sizeof(r->err));
	else if (k == 3)
		npa_reset_peak_stats(r->a, 0);
	else if (k == 4)
		npa_reset_accumulated_stats(r->a, 0);
	else
		npusim_fail_nth_malloc(0, byte(r) % 4);
}

static bool on_stream(aclrtStream stream, void *arg)
{
	return stream == *(aclrtStream *)arg;
}

/* Refusals (no such pool, already routing) are part of what is fuzzed. */
static void op_pool(struct run *r)
{
	unsigned k = byte(r) % 6;
	struct npa_pool_id *id = &r->pools[byte(r) % POOLS];

	if (k == 0) {
		/* Each slot keeps its pool, so that finish can release it. */
		if (npa_pool_id_is_default(*id))
			*id = npa_graph_pool_handle(r->a, byte(r) & 1);
		npa_create_or_incref_pool(r->a, 0, *id);
	} else if (k == 1) {
		npa_begin_allocate_to_pool(r->a, 0, *id, on_stream,
					   &r->streams[byte(r) % STREAMS], r->err,
					   sizeof(r->err));
	} else if (k == 2) {
		npa_end_allocate_to_pool(r->a, 0, *id, r->err, sizeof(r->err));
	} else if (k == 3) {
		npa_release_pool(r->a, 0, *id, r->err, sizeof(r->err));
	} else if (k == 4) {
		npa_empty_cache_pool(r->a, 0, *id);
	} else if (byte(r) & 1) {
		npa_set_use_on_oom(r->a, 0, *id, byte(r) & 1);
	} else {
		npa_set_no_split(r->a, 0, *id);
	}
}

/* ---- pinned host memory: tags written and checked directly ---- */

static void pinned_tags(const struct slot *s, bool write)
{
	uint8_t tag[16];
	size_t n = tag_len(s);
	uint8_t *ends[2] = { s->ptr, (uint8_t *)s->ptr + (s->size < 32 ? 0 : s->size - 16) };

	tag_bytes(s, tag);
	for (int i = 0; i < 2; i++) {
		if (write)
			memcpy(ends[i], tag, n);
		else if (memcmp(ends[i], tag, n))
			abort(); /* a live pinned block's bytes changed */
	}
}

static void op_pin(struct run *r)
{
	struct slot *s = &r->pinned[byte(r) % SLOTS];
	size_t size = size_arg(r);
	aclrtStream stream = stream_arg(r);
	int rc;

	if (s->ptr)
		return;
	rc = npa_host_malloc(npa_host_of(r->a), size, stream, &s->ptr, r->err, sizeof(r->err));
	if (rc == -ENOMEM && !s->ptr && r->err[0])
		return;
	if (rc || !s->ptr || npa_host_block_size(npa_host_of(r->a), s->ptr) < size)
		die(r, "npa_host_malloc failed other than by OOM, or gave too little");
	s->size = size;
	s->tag = ++r->next_tag;
	pinned_tags(s, true);
}

static void unpin_slot(struct run *r, struct slot *s)
{
	if (!s->ptr)
		return;
	pinned_tags(s, false);
	if (npa_host_free(npa_host_of(r->a), s->ptr, r->err, sizeof(r->err)))
		die(r, "npa_host_free of a live pinned block failed");
	s->ptr = NULL;
}

static void op_unpin(struct run *r)
{
	unpin_slot(r, &r->pinned[byte(r) % SLOTS]);
}

/* A non-blocking copy's use of a pinned block: its event, maybe work after. */
static void op_pin_use(struct run *r)
{
	struct slot *s = &r->pinned[byte(r) % SLOTS];
	aclrtStream stream = stream_arg(r);

	if (s->ptr && npa_host_record_event(npa_host_of(r->a), s->ptr, stream) != 1)
		die(r, "record_event of a live pinned block failed");
	if (byte(r) & 1)
		npusim_launch_open(stream);
}

static const char *const host_conf_writes[] = {
	"pinned_max_round_threshold_mb:1",
	"pinned_max_round_threshold_mb:64",
	"pinned_max_cached_size_mb:0",
	"pinned_max_cached_size_mb:8",
	"pinned_reserve_segment_size_mb:4",
};

static void op_host_misc(struct run *r)
{
	struct npa_host *h = npa_host_of(r->a);
	unsigned k = byte(r) % 5;

	if (k == 0)
		npa_host_empty_cache(h);
	else if (k == 1)
		npa_host_reset_peak_stats(h);
	else if (k == 2)
		npa_host_reset_accumulated_stats(h);
	else if (k == 3)
		npa_set_conf(r->a, host_conf_writes[byte(r) % 5], NPA_ORIGIN_WRITE, r->err,
			     sizeof(r->err));
	else
		npusim_fail_nth_host_malloc(byte(r) % 4);
}

/* The pool slots are shared with the device's: a graph's pool is both. */
static void op_host_pool(struct run *r)
{
	struct npa_host *h = npa_host_of(r->a);
	unsigned k = byte(r) % 3;
	struct npa_pool_id *id = &r->pools[byte(r) % POOLS];

	if (npa_pool_id_is_default(*id))
		*id = npa_graph_pool_handle(r->a, false);
	if (k == 0)
		npa_host_begin_allocate_to_pool(h, *id, on_stream, &r->streams[byte(r) % STREAMS],
						r->err, sizeof(r->err));
	else if (k == 1)
		npa_host_end_allocate_to_pool(h, *id, r->err, sizeof(r->err));
	else
		npa_host_release_pool(h, *id, r->err, sizeof(r->err));
}

#define DEVICE_OPS 13

static void (*const ops[])(struct run *) = {
	op_malloc, op_malloc, op_malloc, op_free, op_free, op_record_stream,
	op_work, op_clock, op_set_conf, op_snapshot, op_history, op_misc, op_pool,
	/* With host ops on only. */
	op_pin, op_pin, op_unpin, op_pin_use, op_host_misc, op_host_pool,
};

static bool host_ops(unsigned flags)
{
	return (flags & 0x38) == 0x18;
}

static void start(struct run *r, unsigned flags)
{
	struct npusim_config cfg;
	const struct npa_flavor *flavor = flags & 1 ? &npa_flavor_cuda : &npa_flavor_npu;
	struct npa_options opt = { .flavor = flavor, .device_count = 1 };

	npusim_config_default(&cfg, 1, CAPACITY);
	if (npusim_init(&cfg) || aclrtSetDevice(0) != ACL_SUCCESS)
		die(r, "cannot start the simulated device");
	npa_conf_default(&opt.conf, flavor);
	opt.conf.expandable_segments = (flags & 2) != 0;
	opt.conf.pin_memory_expandable_segments = host_ops(flags) && (flags & 0x40);
	opt.host_capacity = cfg.host.capacity = HOST_CAPACITY;
	if (npa_create_err(&opt, &r->a, r->err, sizeof(r->err)))
		die(r, "npa_create failed");
	r->streams[0] = NULL;
	for (int i = 1; i < STREAMS; i++)
		if (aclrtCreateStream(&r->streams[i]) != ACL_SUCCESS)
			die(r, "aclrtCreateStream failed");
}

/* Free everything, empty the cache: the device must be empty again. */
static void finish(struct run *r)
{
	struct npusim_counters c;
	uint64_t leaked = 0;

	npusim_fail_nth_malloc(0, 0);
	npusim_fail_nth_host_malloc(0);
	for (int i = 0; i < SLOTS; i++) {
		if (r->slots[i].ptr)
			free_slot(r, &r->slots[i]);
		unpin_slot(r, &r->pinned[i]);
	}
	for (int i = 0; i < POOLS; i++) {
		while (npa_end_allocate_to_pool(r->a, 0, r->pools[i], NULL, 0) == 0)
			;
		while (npa_release_pool(r->a, 0, r->pools[i], NULL, 0) == 0)
			;
		while (npa_host_end_allocate_to_pool(npa_host_of(r->a), r->pools[i], NULL, 0) == 0)
			;
		while (npa_host_release_pool(npa_host_of(r->a), r->pools[i], NULL, 0) == 0)
			;
	}
	aclrtSynchronizeDevice();
	npa_empty_cache(r->a, 0);
	npa_host_empty_cache(npa_host_of(r->a));
	if (npa_check(r->a, 0, r->err, sizeof(r->err)) ||
	    npa_host_check(npa_host_of(r->a), r->err, sizeof(r->err)))
		die(r, "invariant broken after freeing everything");
	struct npa_host_stats hs;
	npa_host_get_stats(npa_host_of(r->a), &hs);
	if (hs.active_bytes.current != 0 || hs.allocations.current != 0)
		die(r, "pinned blocks still held after freeing everything");
	if (npa_destroy(r->a, &leaked) || leaked)
		die(r, "blocks leaked");
	if (npusim_device_counters(0, &c) || c.used || c.live_allocations)
		die(r, "device memory not all given back");
	struct npusim_host_counters hc;
	/* The reserve segment, if one was made, lives until the allocator goes. */
	if (npusim_host_counters(&hc) || hc.used || hc.live_allocations)
		die(r, "host memory not all given back");
	for (int i = 1; i < STREAMS; i++)
		aclrtDestroyStream(r->streams[i]);
	npusim_shutdown();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run r;

	memset(&r, 0, sizeof(r));
	r.in = data;
	r.len = size;
	unsigned flags = byte(&r);
	size_t nops = host_ops(flags) ? sizeof(ops) / sizeof(ops[0]) : DEVICE_OPS;

	start(&r, flags);
	while (r.pos < r.len) {
		ops[byte(&r) % nops](&r);
		if (npa_check(r.a, 0, r.err, sizeof(r.err)) ||
		    npa_host_check(npa_host_of(r.a), r.err, sizeof(r.err)))
			die(&r, "invariant broken");
	}
	finish(&r);
	return 0;
}
