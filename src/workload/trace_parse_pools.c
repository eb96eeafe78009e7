/*
 * trace_parse_pools.c - graph and mempool lines: names become dense graph
 * and pool indexes, and the captures and mempools under way are followed
 * line by line, so that a line that cannot name anything (capture_end of
 * a stream not capturing, a released mempool) or that the runtime would
 * refuse in a capture (sync) is refused before anything runs. What the
 * allocator itself refuses, with upstream's words, is left to the replay.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "trace_parse_impl.h"

struct graph_entry {
	UT_hash_handle hh;
	uint32_t index;
	int16_t device;        /* of its latest capture */
	bool capturing;
	unsigned capture_line;
	char key[];
};

struct pool_entry {
	UT_hash_handle hh;
	uint32_t index;
	bool mempool;          /* made by mempool_create, not named by pool=P */
	int16_t device;        /* a mempool's */
	unsigned line;         /* where it was first named */
	unsigned released_line;
	unsigned routing_line; /* a mempool_begin not yet ended */
	char key[];
};

/* A new entry of `size` bytes with a copy of `key` at its flexible member. */
static void *new_named(const char *key, size_t size, size_t key_offset)
{
	size_t len = strlen(key);
	char *e = calloc(1, size + len + 1);

	if (e != NULL)
		memcpy(e + key_offset, key, len + 1);
	return e;
}

static int next_index(struct parser *p, uint32_t *count, const char *what, uint32_t *out)
{
	if (*count == UINT32_MAX - 1)
		return wl_parse_bad(p, "too many %s", what);
	*out = (*count)++;
	return 0;
}

/* Graph `name`, made on first sight; NULL: a new unnamed graph. */
static int graph_for(struct parser *p, const char *name, struct graph_entry **out,
		     uint32_t *index)
{
	struct graph_entry *g = NULL;
	int rc;

	if (name != NULL)
		HASH_FIND_STR(p->graphs, name, g);
	*out = g;
	if (g != NULL) {
		*index = g->index;
		return 0;
	}
	if ((rc = next_index(p, &p->t->ngraphs, "graphs", index)) != 0 || name == NULL)
		return rc;
	if ((g = new_named(name, sizeof(*g), offsetof(struct graph_entry, key))) == NULL)
		return -ENOMEM;
	g->index = *index;
	HASH_ADD_STR(p->graphs, key, g);
	*out = g;
	return 0;
}

static struct pool_entry *find_pool(struct parser *p, const char *name)
{
	struct pool_entry *e;

	HASH_FIND_STR(p->pools, name, e);
	return e;
}

static int new_pool(struct parser *p, const char *name, struct pool_entry **out)
{
	struct pool_entry *e;
	uint32_t index = 0;
	int rc = next_index(p, &p->t->npools, "pools", &index);

	if (rc)
		return rc;
	if ((e = new_named(name, sizeof(*e), offsetof(struct pool_entry, key))) == NULL)
		return -ENOMEM;
	e->index = index;
	e->line = p->line;
	HASH_ADD_STR(p->pools, key, e);
	*out = e;
	return 0;
}

static int pool_for(struct parser *p, const char *name, uint32_t *index)
{
	struct pool_entry *e = find_pool(p, name);
	int rc = e ? 0 : new_pool(p, name, &e);

	if (rc == 0)
		*index = e->index;
	return rc;
}

/* pool=graph:G: G.pool(). A pool is one device's: another device's graph
 * is refused with ctl/graph's words. */
static int pool_of_graph(struct parser *p, const char *name, struct wl_event *ev)
{
	struct graph_entry *g;

	if (*name == '\0')
		return wl_parse_bad(p, "empty pool=graph: name");
	HASH_FIND_STR(p->graphs, name, g);
	if (g == NULL)
		return wl_parse_bad(p, "capture_begin pool=graph:%s: unknown graph '%s'", name,
				    name);
	if (g->device != ev->device)
		return wl_parse_bad(p, "graph %s's pool is on device%d, not device%d", name,
				    g->device, ev->device);
	ev->pool = g->index;
	ev->flags |= WL_POOL_OF_GRAPH;
	return 0;
}

/* pool=handle:H is bare pool=H, a handle shared with mempool names. */
static int capture_pool(struct parser *p, const char *pool, struct wl_event *ev)
{
	if (strncmp(pool, "graph:", 6) == 0)
		return pool_of_graph(p, pool + 6, ev);
	if (strncmp(pool, "handle:", 7) != 0)
		return pool_for(p, pool, &ev->pool);
	if (pool[7] == '\0')
		return wl_parse_bad(p, "empty pool=handle: name");
	return pool_for(p, pool + 7, &ev->pool);
}

static int16_t device_or_0(const struct options *o)
{
	return (int16_t)(o->device < 0 ? 0 : o->device);
}

static void start_capture(struct parser *p, struct stream_entry *s,
			  struct graph_entry *g, const struct wl_event *ev)
{
	s->capturing = true;
	s->capture_graph = ev->slot;
	s->capture_named = g;
	s->capture_device = ev->device;
	s->capture_line = p->line;
	p->ncapturing++;
	if (g != NULL) {
		g->device = ev->device;
		g->capturing = true;
		g->capture_line = p->line;
	}
}

int wl_parse_capture_begin(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	struct stream_entry *s = NULL;
	struct graph_entry *g;
	struct options o;
	int rc = wl_parse_check_fields(p, f, nf, 2, 2 + 4, "STREAM");

	if (rc == 0)
		rc = wl_parse_stream_field(p, f[1], &s);
	if (rc == 0)
		rc = wl_parse_options(p, f + 2, nf - 2, OPT_DEVICE | OPT_POOL | OPT_GRAPH | OPT_MODE,
				      &o);
	if (rc)
		return rc;
	/* capture_end names a stream: one capture a stream at a time. */
	if (s->capturing)
		return wl_parse_bad(p, "capture_begin: stream %ld is already capturing (line %u)",
				    s->number, s->capture_line);
	if ((rc = graph_for(p, o.graph, &g, &ev->slot)) != 0)
		return rc;
	ev->pool = WL_NO_POOL;
	ev->stream = s->index;
	ev->device = device_or_0(&o);
	ev->flags = (uint32_t)o.mode;
	if (o.pool != NULL && (rc = capture_pool(p, o.pool, ev)) != 0)
		return rc;
	start_capture(p, s, g, ev);
	return 0;
}

int wl_parse_capture_end(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	struct stream_entry *s = NULL;
	int rc = wl_parse_check_fields(p, f, nf, 2, 2, "STREAM");

	if (rc == 0)
		rc = wl_parse_stream_field(p, f[1], &s);
	if (rc)
		return rc;
	if (!s->capturing)
		return wl_parse_bad(p, "capture_end: stream %ld is not capturing", s->number);
	ev->slot = s->capture_graph;
	ev->stream = s->index;
	ev->device = s->capture_device;
	s->capturing = false;
	if (s->capture_named != NULL)
		s->capture_named->capturing = false;
	p->ncapturing--;
	return 0;
}

/* A graph named by an earlier capture_begin. */
static int known_graph(struct parser *p, const char *cmd, const char *name,
		       struct graph_entry **out)
{
	HASH_FIND_STR(p->graphs, name, *out);
	if (*out == NULL)
		return wl_parse_bad(p, "%s of unknown graph '%s'", cmd, name);
	return 0;
}

int wl_parse_graph_replay(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	struct stream_entry *s = NULL;
	struct graph_entry *g = NULL;
	struct options o;
	int rc = wl_parse_check_fields(p, f, nf, 2, 3, "G");

	if (rc == 0)
		rc = wl_parse_options(p, f + 2, nf - 2, OPT_STREAM, &o);
	if (rc == 0)
		rc = known_graph(p, f[0], f[1], &g);
	if (rc == 0 && o.stream > 0)
		rc = wl_parse_stream_entry(p, o.stream, &s);
	if (rc)
		return rc;
	ev->slot = g->index;
	ev->device = g->device;
	ev->stream = s ? s->index : 0;
	return 0;
}

/* Our reset also stops a capture's pool routing; upstream's does nothing
 * to a capture under way, so a reset during one would replay neither. */
int wl_parse_graph_reset(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	struct graph_entry *g = NULL;
	int rc = wl_parse_check_fields(p, f, nf, 2, 2, "G");

	if (rc == 0)
		rc = known_graph(p, f[0], f[1], &g);
	if (rc)
		return rc;
	if (g->capturing)
		return wl_parse_bad(p, "graph_reset of graph '%s' while it captures (line %u)",
				    f[1], g->capture_line);
	ev->slot = g->index;
	ev->device = g->device;
	return 0;
}

int wl_parse_mempool_create(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	struct pool_entry *e;
	struct options o;
	int rc = wl_parse_check_fields(p, f, nf, 2, 2 + 3, "M");

	if (rc == 0)
		rc = wl_parse_options(p, f + 2, nf - 2,
				      OPT_DEVICE | OPT_USE_ON_OOM | OPT_NO_SPLIT, &o);
	if (rc)
		return rc;
	if ((e = find_pool(p, f[1])) != NULL)
		return wl_parse_bad(p, "mempool_create: pool '%s' already named (line %u)",
				    f[1], e->line);
	if ((rc = new_pool(p, f[1], &e)) != 0)
		return rc;
	e->mempool = true;
	e->device = device_or_0(&o);
	ev->pool = e->index;
	ev->device = e->device;
	ev->flags = ((o.flags & OPT_USE_ON_OOM) ? WL_POOL_USE_ON_OOM : 0) |
		    ((o.flags & OPT_NO_SPLIT) ? WL_POOL_NO_SPLIT : 0);
	return 0;
}

/* A mempool made by mempool_create and not released. */
static int live_mempool(struct parser *p, char **f, struct wl_event *ev,
			struct pool_entry **out)
{
	struct pool_entry *e = find_pool(p, f[1]);

	if (e == NULL || !e->mempool)
		return wl_parse_bad(p, "%s of unknown mempool '%s'", f[0], f[1]);
	if (e->released_line)
		return wl_parse_bad(p, "%s of mempool '%s', released on line %u", f[0], f[1],
				    e->released_line);
	ev->pool = e->index;
	ev->device = e->device;
	*out = e;
	return 0;
}

int wl_parse_mempool_begin(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	struct stream_entry *s = NULL;
	struct pool_entry *e = NULL;
	struct options o;
	int rc = wl_parse_check_fields(p, f, nf, 3, 3, nf < 2 ? "M stream=S" : "stream=S");

	if (rc == 0)
		rc = wl_parse_options(p, f + 2, nf - 2, OPT_STREAM, &o);
	if (rc == 0)
		rc = live_mempool(p, f, ev, &e);
	if (rc == 0)
		rc = wl_parse_stream_entry(p, o.stream, &s);
	if (rc)
		return rc;
	ev->stream = s->index;
	if (e->routing_line == 0)
		e->routing_line = p->line;
	return 0;
}

int wl_parse_mempool_end(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	struct pool_entry *e = NULL;
	int rc = wl_parse_check_fields(p, f, nf, 2, 2, "M");

	if (rc == 0)
		rc = live_mempool(p, f, ev, &e);
	if (rc == 0)
		e->routing_line = 0;
	return rc;
}

/* Upstream's use_mem_pool context holds the MemPool: no destructor inside it. */
int wl_parse_mempool_release(struct parser *p, char **f, int nf, struct wl_event *ev)
{
	struct pool_entry *e = NULL;
	int rc = wl_parse_check_fields(p, f, nf, 2, 2, "M");

	if (rc == 0)
		rc = live_mempool(p, f, ev, &e);
	if (rc)
		return rc;
	if (e->routing_line)
		return wl_parse_bad(p, "mempool_release of mempool '%s' while it routes "
				    "allocations (mempool_begin on line %u)", f[1],
				    e->routing_line);
	e->released_line = p->line;
	return 0;
}

static const struct stream_entry *a_capturing_stream(const struct parser *p)
{
	const struct stream_entry *s;

	for (s = p->streams; s != NULL; s = s->hh.next)
		if (s->capturing)
			return s;
	return NULL;
}

/*
 * The runtime refuses to synchronize a capturing stream, or a device one
 * of whose streams captures (aclrtSynchronizeStream/Device); the line is
 * refused here rather than left to stop the replay half way.
 */
int wl_parse_sync_allowed(struct parser *p, const struct stream_entry *s)
{
	const struct stream_entry *c;

	if (s == NULL && p->ncapturing == 0)
		return 0;
	c = s ? s : a_capturing_stream(p);
	if (s == NULL && c != NULL)
		return wl_parse_bad(p, "sync: the runtime refuses to synchronize a device while "
				    "stream %ld captures (capture_begin on line %u)",
				    c->number, c->capture_line);
	if (s != NULL && s->capturing)
		return wl_parse_bad(p, "sync %ld: the runtime refuses to synchronize a stream "
				    "while it captures (capture_begin on line %u)",
				    s->number, s->capture_line);
	return 0;
}

void wl_parse_pools_release(struct parser *p)
{
	struct graph_entry *g, *gtmp;
	struct pool_entry *e, *etmp;

	WL_HASH_FREE_ALL(p->graphs, g, gtmp);
	WL_HASH_FREE_ALL(p->pools, e, etmp);
}
