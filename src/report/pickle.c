/*
 * pickle.c - _snapshot() as the pickle PyTorch's memory_viz reads: the
 * dict torch.cuda.memory._dump_snapshot() writes, with the segments of
 * memory_snapshot(), one trace list per device and, for the cuda flavor,
 * allocator_settings.
 *
 * Protocol 4 without memo or framing, using only the opcodes MemoryViz.js
 * unpickles (and Python's pickle, of course): each dict and list is an
 * EMPTY_* opcode, then MARK, its items and SETITEMS/APPENDS.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "report.h"

#define OP_PROTO "\x80"
#define OP_EMPTY_DICT '}'
#define OP_EMPTY_LIST ']'
#define OP_MARK '('
#define OP_SETITEMS 'u'
#define OP_APPENDS 'e'
#define OP_BININT 'J'
#define OP_BININT1 'K'
#define OP_BININT2 'M'
#define OP_LONG1 '\x8a'
#define OP_BINFLOAT 'G'
#define OP_SHORT_BINUNICODE '\x8c'
#define OP_BINUNICODE 'X'
#define OP_NEWTRUE '\x88'
#define OP_NEWFALSE '\x89'
#define OP_TUPLE2 '\x86'
#define OP_STOP '.'

static void op(struct sbuf *out, char c)
{
	sbuf_append(out, &c, 1);
}

static void le(struct sbuf *out, uint64_t v, size_t n)
{
	unsigned char b[8];

	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	sbuf_append(out, (const char *)b, n);
}

/* The smallest of BININT1, BININT2, BININT for what fits a signed 32-bit
 * int, else LONG1: little-endian two's complement, as few bytes as keep
 * the sign (addresses and microsecond times need 6 or 7). */
static void put_int(struct sbuf *out, int64_t v)
{
	if (v >= 0 && v < 256) {
		op(out, OP_BININT1);
		le(out, (uint64_t)v, 1);
	} else if (v >= 0 && v < 65536) {
		op(out, OP_BININT2);
		le(out, (uint64_t)v, 2);
	} else if (v >= INT32_MIN && v <= INT32_MAX) {
		op(out, OP_BININT);
		le(out, (uint64_t)v, 4);
	} else {
		size_t n = 8;
		while (n > 1 && (v >> (8 * (n - 1) - 1)) == (v < 0 ? -1 : 0))
			n--;
		op(out, OP_LONG1);
		le(out, n, 1);
		le(out, (uint64_t)v, n);
	}
}

/* Sizes and addresses are below 2^63; a uint64 above would need 9 bytes. */
static void put_u64(struct sbuf *out, uint64_t v)
{
	if (v <= INT64_MAX) {
		put_int(out, (int64_t)v);
		return;
	}
	op(out, OP_LONG1);
	le(out, 9, 1);
	le(out, v, 8);
	le(out, 0, 1);
}

static void put_str(struct sbuf *out, const char *s)
{
	size_t n = strlen(s);

	if (n < 256) {
		op(out, OP_SHORT_BINUNICODE);
		le(out, n, 1);
	} else {
		op(out, OP_BINUNICODE);
		le(out, n, 4);
	}
	sbuf_append(out, s, n);
}

static void put_bool(struct sbuf *out, bool v)
{
	op(out, v ? OP_NEWTRUE : OP_NEWFALSE);
}

/* BINFLOAT is big-endian. */
static void put_float(struct sbuf *out, double d)
{
	uint64_t v;
	unsigned char b[8];

	memcpy(&v, &d, sizeof(v));
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (56 - 8 * i));
	op(out, OP_BINFLOAT);
	sbuf_append(out, (const char *)b, 8);
}

static void empty_list(struct sbuf *out)
{
	op(out, OP_EMPTY_LIST);
}

/* A container's items go between begin (EMPTY_x MARK) and its end opcode. */
static void begin(struct sbuf *out, char empty)
{
	op(out, empty);
	op(out, OP_MARK);
}

static void key_u64(struct sbuf *out, const char *k, uint64_t v)
{
	put_str(out, k);
	put_u64(out, v);
}

/* Upstream's frames list: [] or one {"name", "filename", "line"} dict. */
static void put_frames(struct sbuf *out, const struct npa_frame *f)
{
	put_str(out, "frames");
	if (f->filename == NULL) {
		empty_list(out);
		return;
	}
	begin(out, OP_EMPTY_LIST);
	begin(out, OP_EMPTY_DICT);
	put_str(out, "name");
	put_str(out, f->name ? f->name : "");
	put_str(out, "filename");
	put_str(out, f->filename);
	key_u64(out, "line", f->line);
	op(out, OP_SETITEMS);
	op(out, OP_APPENDS);
}

static void put_block(struct sbuf *out, const struct npa_block_info *b)
{
	begin(out, OP_EMPTY_DICT);
	key_u64(out, "address", b->address);
	key_u64(out, "size", b->size);
	key_u64(out, "requested_size", b->requested_size);
	put_str(out, "state");
	put_str(out, npa_block_state_name(b->state));
	put_frames(out, &b->frame);
	op(out, OP_SETITEMS);
}

static void put_blocks(struct sbuf *out, const struct npa_segment_info *seg)
{
	if (seg->nblocks == 0) {
		empty_list(out);
		return;
	}
	begin(out, OP_EMPTY_LIST);
	for (size_t i = 0; i < seg->nblocks; i++)
		put_block(out, &seg->blocks[i]);
	op(out, OP_APPENDS);
}

/* A MempoolId_t: upstream pickles it as a 2-tuple. */
static void put_pool_id(struct sbuf *out, const char *key, const uint64_t id[2])
{
	put_str(out, key);
	put_u64(out, id[0]);
	put_u64(out, id[1]);
	op(out, OP_TUPLE2);
}

/* The keys of memory_snapshot() in upstream's order, as report_snapshot_json:
 * a segment's frame, when it has one, after its blocks. */
static void put_segment(struct sbuf *out, const struct npa_segment_info *seg)
{
	begin(out, OP_EMPTY_DICT);
	key_u64(out, "device", (uint64_t)seg->device);
	key_u64(out, "address", seg->address);
	key_u64(out, "total_size", seg->total_size);
	key_u64(out, "allocated_size", seg->allocated_size);
	key_u64(out, "active_size", seg->active_size);
	key_u64(out, "requested_size", seg->requested_size);
	key_u64(out, "stream", seg->stream);
	put_str(out, "segment_type");
	put_str(out, seg->is_large ? "large" : "small");
	put_pool_id(out, "segment_pool_id", seg->pool_id);
	put_str(out, "is_expandable");
	put_bool(out, seg->is_expandable);
	if (seg->frame.filename == NULL)
		put_frames(out, &seg->frame);
	put_str(out, "blocks");
	put_blocks(out, seg);
	if (seg->frame.filename != NULL)
		put_frames(out, &seg->frame);
	op(out, OP_SETITEMS);
}

static void put_segments(struct sbuf *out, const struct npa_snapshot *snap)
{
	if (snap->nsegments == 0) {
		empty_list(out);
		return;
	}
	begin(out, OP_EMPTY_LIST);
	for (size_t i = 0; i < snap->nsegments; i++)
		put_segment(out, &snap->segments[i]);
	op(out, OP_APPENDS);
}

/* Upstream's TraceEntry dict, keys in torch_npu's order (memory_snapshot.cpp):
 * "oom" names its address field device_free; frames last. */
static void put_event(struct sbuf *out, const struct npa_trace_entry *e)
{
	begin(out, OP_EMPTY_DICT);
	put_str(out, "action");
	put_str(out, npa_trace_action_name(e->action));
	key_u64(out, e->action == NPA_TRACE_OOM ? "device_free" : "addr", e->addr);
	key_u64(out, "size", e->size);
	key_u64(out, "stream", e->stream);
	put_pool_id(out, "pool_id", e->pool_id);
	put_str(out, "time_us");
	put_int(out, e->time_us);
	put_frames(out, &e->frame);
	op(out, OP_SETITEMS);
}

static void put_trace(struct sbuf *out, const struct npa_trace *t)
{
	if (t == NULL || t->n == 0) {
		empty_list(out);
		return;
	}
	begin(out, OP_EMPTY_LIST);
	for (size_t i = 0; i < t->n; i++)
		put_event(out, &t->entries[i]);
	op(out, OP_APPENDS);
}

static void put_traces(struct sbuf *out, const struct npa_trace *traces, int ndevices)
{
	if (ndevices <= 0) {
		empty_list(out);
		return;
	}
	begin(out, OP_EMPTY_LIST);
	for (int i = 0; i < ndevices; i++)
		put_trace(out, traces ? &traces[i] : NULL);
	op(out, OP_APPENDS);
}

/* roundup_power2_divisions: interval i starts at 2^i MiB, keyed "1".."32768". */
static void put_divisions(struct sbuf *out, const struct npa_conf *conf)
{
	char key[16];

	begin(out, OP_EMPTY_DICT);
	for (int i = 0; i < NPA_ROUNDUP_INTERVALS; i++) {
		snprintf(key, sizeof(key), "%u", 1u << i);
		key_u64(out, key, conf->roundup_power2_divisions[i]);
	}
	op(out, OP_SETITEMS);
}

/* Keys and order of upstream's allocator_settings (memory_snapshot.cpp).
 * The pinned host allocator's settings are its defaults: it has no knobs here. */
static void put_settings(struct sbuf *out, const struct npa_conf *conf)
{
	begin(out, OP_EMPTY_DICT);
	put_str(out, "PYTORCH_CUDA_ALLOC_CONF");
	put_str(out, conf->last_string);
	put_str(out, "max_split_size");
	put_int(out, conf->max_split_size == SIZE_MAX ? -1 : (int64_t)conf->max_split_size);
	put_str(out, "garbage_collection_threshold");
	put_float(out, conf->garbage_collection_threshold);
	put_str(out, "expandable_segments");
	put_bool(out, conf->expandable_segments);
	key_u64(out, "pinned_num_register_threads", 1);
	put_str(out, "release_lock_on_cudamalloc");
	put_bool(out, false);
	put_str(out, "pinned_use_cuda_host_register");
	put_bool(out, false);
	put_str(out, "roundup_power2_divisions");
	put_divisions(out, conf);
	op(out, OP_SETITEMS);
}

int report_snapshot_pickle(struct sbuf *out, const struct npa_snapshot *snap,
			   const struct npa_trace *traces, int ndevices,
			   const struct npa_flavor *fl, const struct npa_conf *conf)
{
	sbuf_append(out, OP_PROTO "\x04", 2);
	begin(out, OP_EMPTY_DICT);
	put_str(out, "segments");
	put_segments(out, snap);
	put_str(out, "device_traces");
	put_traces(out, traces, ndevices);
	if (conf != NULL && fl->conf_dialect == NPA_CONF_DIALECT_PYTORCH) {
		put_str(out, "allocator_settings");
		put_settings(out, conf);
	}
	op(out, OP_SETITEMS);
	op(out, OP_STOP);
	return out->error;
}
