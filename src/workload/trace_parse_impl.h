/*
 * trace_parse_impl.h - the parser's state and helpers, shared by
 * trace_parse.c (lines, IDs, streams, options) and trace_parse_pools.c
 * (graph and mempool lines).
 */
#ifndef NPUMEMFS_TRACE_PARSE_IMPL_H
#define NPUMEMFS_TRACE_PARSE_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include <uthash.h>

#include "replay.h"

struct graph_entry;

struct stream_entry {
	UT_hash_handle hh;
	long number;
	int32_t index;
	/* The capture under way on this stream number, if any. */
	bool capturing;
	uint32_t capture_graph;
	struct graph_entry *capture_named; /* NULL: an unnamed graph */
	int16_t capture_device;
	unsigned capture_line;
};

struct id_entry;
struct pool_entry;
struct pin_entry;

struct parser {
	const char *name;
	unsigned line;
	struct wl_trace *t;
	size_t cap;
	size_t stream_cap;
	size_t op_cap;               /* of t->op_ns */
	struct id_entry *ids;
	struct stream_entry *streams;
	struct graph_entry *graphs;  /* named graphs */
	struct pool_entry *pools;    /* pool=P and mempool names */
	struct pin_entry *pins;      /* pinned IDs (trace_parse_host.c) */
	unsigned ncapturing;         /* streams capturing now */
	unsigned loop_line;          /* line of loop_start, 0 without one */
	char *err;
	size_t errlen;
};

/* Which options a command takes (one bit each, in the usage's order). */
enum {
	OPT_STREAM = 1u << 0,
	OPT_DEVICE = 1u << 1,
	OPT_POOL = 1u << 2,
	OPT_GRAPH = 1u << 3,
	OPT_USE_ON_OOM = 1u << 4,
	OPT_NO_SPLIT = 1u << 5,
	OPT_MODE = 1u << 6,
	OPT_NS = 1u << 7,
};

struct options {
	int device;        /* -1: not given */
	long stream;       /* -1: not given */
	const char *pool;  /* NULL: not given */
	const char *graph; /* NULL: not given */
	unsigned flags;    /* OPT_USE_ON_OOM, OPT_NO_SPLIT given */
	aclmdlRICaptureMode mode; /* global unless given */
	uint64_t ns;       /* UINT64_MAX: not given */
};

/* Unlink and free every entry of a uthash table. */
#define WL_HASH_FREE_ALL(head, e, tmp)		\
	HASH_ITER(hh, head, e, tmp) {		\
		HASH_DEL(head, e);		\
		free(e);			\
	}

__attribute__((format(printf, 2, 3)))
int wl_parse_bad(struct parser *p, const char *fmt, ...);
int wl_parse_check_fields(struct parser *p, char **f, int nf, int min, int max,
			  const char *usage);
/* The fields f[0..nf) as options of the kinds `allowed` (OPT_*). */
int wl_parse_options(struct parser *p, char **f, int nf, unsigned allowed,
		     struct options *o);
int wl_parse_stream(struct parser *p, const char *s, int32_t *out);
/* The entry of stream `number`, made on first sight. */
int wl_parse_stream_entry(struct parser *p, long number, struct stream_entry **out);
/* The entry of the stream field `s`. */
int wl_parse_stream_field(struct parser *p, const char *s, struct stream_entry **out);

/* Graph and mempool lines (trace_parse_pools.c). */
int wl_parse_capture_begin(struct parser *p, char **f, int nf, struct wl_event *ev);
int wl_parse_capture_end(struct parser *p, char **f, int nf, struct wl_event *ev);
int wl_parse_graph_replay(struct parser *p, char **f, int nf, struct wl_event *ev);
int wl_parse_graph_reset(struct parser *p, char **f, int nf, struct wl_event *ev);
int wl_parse_mempool_create(struct parser *p, char **f, int nf, struct wl_event *ev);
int wl_parse_mempool_begin(struct parser *p, char **f, int nf, struct wl_event *ev);
int wl_parse_mempool_end(struct parser *p, char **f, int nf, struct wl_event *ev);
int wl_parse_mempool_release(struct parser *p, char **f, int nf, struct wl_event *ev);
/* launch_op (trace_parse_ops.c). */
int wl_parse_launch_op(struct parser *p, char **f, int nf, struct wl_event *ev);
/* Refuse a sync the runtime refuses while a stream captures. */
int wl_parse_sync_allowed(struct parser *p, const struct stream_entry *s);
void wl_parse_pools_release(struct parser *p);

/* Pinned host lines (trace_parse_host.c). */
int wl_parse_pin(struct parser *p, char **f, int nf, struct wl_event *ev);
int wl_parse_unpin(struct parser *p, char **f, int nf, struct wl_event *ev);
int wl_parse_copy(struct parser *p, char **f, int nf, struct wl_event *ev);
/* loop_start: remember which pinned IDs are live; at the end, refuse a
 * loop that leaves them otherwise. */
void wl_parse_host_loop_start(struct parser *p);
int wl_parse_host_check_loop(struct parser *p);
void wl_parse_host_release(struct parser *p);

#endif /* NPUMEMFS_TRACE_PARSE_IMPL_H */
