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

#include "base/mem_populate.h"
#include "base/str_table.h"
#include "trace.h"
#include "trace_lines.h"

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

struct pool_entry;

/* What the parser knows of one ID (or pinned ID). */
struct id_state {
	unsigned line;       /* where it was last allocated or freed */
	unsigned first_line; /* its first alloc: the order a loop refusal goes by */
	int16_t device;
	bool live;
	bool live_at_loop;   /* live at loop_start */
	bool used;           /* record_stream'ed since its alloc */
	bool pending;        /* freed after record_stream: a complete may name it */
	uint64_t died;       /* 1 + its place among the deaths, while dead */
};

/*
 * A namespace of IDs: device IDs (made by alloc, ended by free) or pinned
 * IDs (pin, unpin). A streamed trace forgets an ID once no later line
 * can need it: freed, no complete to come, not live at loop_start, and
 * not among the last WL_FREED_KEPT deaths (kept so that a free of an ID
 * freed shortly before names the line at once).
 */
struct id_space {
	struct str_table names;
	struct id_state *st;   /* [names.limit] */
	size_t st_cap;
	const char *make, *end; /* the commands that make and end one */
	bool forgetting;       /* streamed */
	bool forgot;           /* some ID was forgotten */
	bool loop_started;
	uint32_t *ring;        /* [WL_FREED_KEPT]: death d's ID at d % WL_FREED_KEPT */
	uint64_t deaths;
};

#define WL_FREED_KEPT 1024

struct parser {
	const char *name;
	unsigned line;
	struct wl_trace *t;
	struct trace_lines *in;      /* where the lines come from */
	bool streamed;               /* events go a chunk at a time; IDs are forgotten */
	size_t cap;
	size_t stream_cap;
	size_t op_cap;               /* of t->op_ns */
	struct id_space ids;
	struct stream_entry *streams;
	struct graph_entry *graphs;  /* named graphs */
	struct pool_entry *pools;    /* pool=P and mempool names */
	struct id_space pins;        /* pinned IDs (trace_parse_host.c) */
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
/* Room for one more of `elem` bytes in *array (used of *cap taken): doubled
 * when full, `first` at first; -ENOMEM leaves it as it was. */
int wl_parse_grow(void **array, size_t *cap, size_t used, size_t elem, size_t first);
/* Room for `events` events in the chunk's array, empty now, at once
 * (a chunk of known size grows no further): 0, or -ENOMEM. */
int wl_parse_reserve(struct parser *p, size_t events);
/* Room in the chunk's array for one more event: 0, or -ENOMEM. */
static inline int wl_parse_room(struct parser *p)
{
	struct wl_trace *t = p->t;

	if (t->nevents < p->cap)
		return 0;
	return wl_parse_grow((void **)&t->events, &p->cap, t->nevents, sizeof(*t->events), 1024);
}
/* A SIZE field into *out, or "bad WHAT 'FIELD'", with the spelling to use
 * when its unit could mean 1000s or 1024s. */
int wl_parse_size(struct parser *p, const char *field, const char *what, uint64_t *out);
/* "CMD ID SIZE [stream=S] [device=D]" (alloc, pin): the fields counted,
 * the size into ev->size, the stream's index into ev->stream. */
int wl_parse_sized(struct parser *p, char **f, int nf, struct wl_event *ev,
		   struct options *o);
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

/* A new event of `op` on this line, zeroed, at the end of the trace's
 * events (not yet counted); NULL if out of memory. */
struct wl_event *wl_parse_event(struct parser *p, enum wl_op op);
/*
 * The fast path (trace_fast.c): 1 if `line` (len bytes) is a plain
 * "alloc ID SIZE" or "free ID" that could be taken, its event added; 0 to
 * leave it to the general parser, nothing changed; or -ENOMEM.
 */
int wl_parse_fast(struct parser *p, const char *line, size_t len);
/* Orders the cache-bypassing stores of wl_parse_fast before a chunk is handed over. */
void wl_parse_fence(void);

/* ID namespaces (trace_parse_ids.c). */
void wl_ids_init(struct id_space *s, const char *make, const char *end, bool forgetting);
void wl_ids_release(struct id_space *s);
/* The index of `key`, or -1 if it is not known (never seen, or forgotten). */
int64_t wl_ids_find(const struct id_space *s, const char *key);
/* The same for `len` bytes with their str_table_hash. */
static inline int64_t wl_ids_find_hashed(const struct id_space *s, const char *key,
					 size_t len, uint64_t hash)
{
	return str_table_find_hashed(&s->names, key, len, hash);
}
/* A new ID: 0 with its index (its state zeroed), or an error. */
int wl_ids_add(struct parser *p, struct id_space *s, const char *key, uint32_t *index);
int wl_ids_add_hashed(struct parser *p, struct id_space *s, const char *key, size_t len,
		      uint64_t hash, uint32_t *index);
/* The ID a line makes live: a dead or new one (its index), or the refusal
 * "WHAT 'KEY' is already STATE (line N)" for one live already. */
int wl_ids_take(struct parser *p, struct id_space *s, const char *key, const char *what,
		const char *state, uint32_t *index);
/* The ID at `index` is dead now (freed, completed or unpinned). */
void wl_ids_died(struct id_space *s, uint32_t index);
void wl_ids_loop_start(struct id_space *s);

/* Device ID `i` allocated (ev->device set) or freed by event `ev`;
 * inline, for the fast path's every line. */
static inline void wl_parse_id_made(struct parser *p, uint32_t i, struct wl_event *ev)
{
	struct id_state *e = &p->ids.st[i];

	ev->slot = i;
	e->device = ev->device;
	e->live = true;
	e->line = p->line;
	e->used = false;
	e->pending = false;
}

static inline void wl_parse_id_freed(struct parser *p, uint32_t i, struct wl_event *ev)
{
	struct id_state *e = &p->ids.st[i];

	ev->slot = i;
	ev->device = e->device;
	/* Its events wait on the streams it was used on: a complete may follow. */
	e->pending = e->used;
	e->live = false;
	e->line = p->line;
	if (!e->pending)
		wl_ids_died(&p->ids, i);
}

/* The ID that loop_start found otherwise, in the order of first allocs:
 * 0 with its index, or -ENOENT if every ID is as it was. */
int wl_ids_loop_mismatch(struct parser *p, struct id_space *s, uint32_t *index);
/*
 * For an ID not known: the line where it was last made or ended (0: never
 * named), found by reading the trace again if it was forgotten. -ENOENT if
 * it was forgotten and the trace cannot be read again (a pipe).
 */
int wl_ids_forgotten_line(struct parser *p, const struct id_space *s, const char *key,
			  unsigned *line);

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

/*
 * The parser's life: begin (a trace of no events), then some lines at a
 * time (up to `max` events held; *ended at the trace's end, its end
 * checked), then end (the parser's tables go; p->t is the caller's). A
 * streamed parser forgets IDs (id_space) and has no event cap.
 */
int wl_parse_begin(struct parser *p, const char *name, struct trace_lines *in,
		   bool streamed, char *err, size_t errlen);
int wl_parse_some(struct parser *p, size_t max, bool *ended);
void wl_parse_end(struct parser *p);
/* rc, with "TRACE: reason" in err for -ENOMEM and -EIO. */
int wl_parse_error(struct parser *p, int rc);

/* Split a line at blanks, in place, dropping a '#' comment: the fields. */
#define WL_MAX_FIELDS 8
int wl_parse_split(char *s, char **f);

#endif /* NPUMEMFS_TRACE_PARSE_IMPL_H */
