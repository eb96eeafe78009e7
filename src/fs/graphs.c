/*
 * graphs.c - ctl/graph: "VERB G [key=value ...]" writes that create,
 * capture, replay, reset and destroy NPUGraphs, and the file's listing of
 * them. Captures and their pools go through workload/graph_driver.h, as a
 * replayed trace's do; here are the words, the graphs and handles by
 * name, and the bytes a graph's tensors keep for its replays.
 *
 * A write is parsed on the FUSE thread that got it and carried out on the
 * graph worker, under the registry's lock, so a reader of ctl/graph never
 * sees a graph half changed. Refusals carry upstream's text from the
 * allocator.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "alloc/graph/graph.h"
#include "report/report.h"
#include "workload/graph_driver.h"

#include "ctl_args.h"
#include "daemon.h"
#include "graph_worker.h"
#include "graphs.h"
#include "nodes.h"
#include "pools.h"

struct fs_graph {
	char name[CTL_NAME_MAX + 1];
	struct npa_graph *g;
	int stream;            /* S of its last capture_begin, -1 before one */
	uint64_t begun;        /* when its last capture began, in captures begun */
	aclmdlRICaptureMode mode; /* of its last capture_begin */
	UT_hash_handle hh;
};

/* torch.npu.graph_pool_handle() kept under a name: only an id, the pool
 * itself is made by the first capture that names it. */
struct fs_handle {
	char name[CTL_NAME_MAX + 1];
	struct wl_pool_handle h;
	UT_hash_handle hh;
};

struct fs_graphs {
	pthread_mutex_t lock;
	struct graph_worker *worker;
	struct fs_graph *by_name;   /* uthash iterates in creation order */
	struct fs_handle *handles;
	uint64_t captures;          /* captures begun, to order them */
};

enum graph_option { OPT_STREAM = 1, OPT_POOL = 2, OPT_MODE = 4, OPT_DEVICE = 8 };

struct graph_job;
typedef int (*graph_run_fn)(struct graph_job *j, struct fs_graph *e);

struct graph_verb {
	const char *name;
	unsigned options;      /* enum graph_option bits it takes */
	graph_run_fn run;
};

struct graph_cmd {
	const struct graph_verb *verb;
	const char *name;
	int stream;            /* -1: not given */
	int device;
	const char *pool;      /* NULL: the graph's own */
	aclmdlRICaptureMode mode;
};

struct graph_job {
	struct nmfs *d;
	struct fs_graphs *gs;
	struct graph_cmd cmd;
	char *err;
	size_t errlen;
};

int graphs_new(struct fs_graphs **out)
{
	struct fs_graphs *gs = calloc(1, sizeof(*gs));

	if (!gs)
		return -ENOMEM;
	pthread_mutex_init(&gs->lock, NULL);
	*out = gs;
	return 0;
}

int graphs_start(struct fs_graphs *gs)
{
	return gw_start(&gs->worker);
}

/* Runs on the worker: a capture under way ends on the thread that began it. */
static int free_all(void *arg)
{
	struct fs_graphs *gs = arg;
	struct fs_graph *e, *tmp;
	struct fs_handle *h, *htmp;

	HASH_ITER(hh, gs->by_name, e, tmp) {
		HASH_DEL(gs->by_name, e);
		npa_graph_free(e->g);
		free(e);
	}
	HASH_ITER(hh, gs->handles, h, htmp) {
		HASH_DEL(gs->handles, h);
		free(h);
	}
	return 0;
}

void graphs_free(struct fs_graphs *gs)
{
	if (!gs)
		return;
	/* Without a worker no graph ever captured: any thread may free them. */
	if (gs->worker)
		gw_run(gs->worker, free_all, gs);
	else
		free_all(gs);
	gw_stop(gs->worker);
	pthread_mutex_destroy(&gs->lock);
	free(gs);
}

static int no_graph(struct graph_job *j, const char *name)
{
	snprintf(j->err, j->errlen, "no graph %s (create it first)", name);
	return -ENOENT;
}

static struct fs_graph *find_graph(struct fs_graphs *gs, const char *name)
{
	struct fs_graph *e;

	HASH_FIND_STR(gs->by_name, name, e);
	return e;
}

static int run_create(struct graph_job *j, struct fs_graph *e)
{
	if (e) {
		snprintf(j->err, j->errlen, "graph %s exists", j->cmd.name);
		return -EEXIST;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	int rc = npa_graph_new(sw_caching(j->d->sw), sw_allocator(j->d->sw), &e->g);
	if (rc) {
		free(e);
		return rc;
	}
	snprintf(e->name, sizeof(e->name), "%s", j->cmd.name);
	e->stream = -1;
	HASH_ADD_STR(j->gs->by_name, name, e);
	return 0;
}

/* pool=G2: the pool of another graph's successful capture (pool()). */
static int pool_of_graph(struct graph_job *j, const char *name, struct npa_pool_id *id)
{
	struct fs_graph *other = find_graph(j->gs, name);

	if (!other)
		return no_graph(j, name);
	return wl_graph_pool_of(other->g, name, j->cmd.device, id, j->err, j->errlen);
}

/* pool=handle:H: H's id, or a new graph_pool_handle() kept as H once the
 * capture has begun (*made); a refused capture has still used the id up. */
static int pool_of_handle(struct graph_job *j, const char *name, struct npa_pool_id *id,
			  struct fs_handle **made)
{
	struct fs_handle *h;

	if (!ctl_name_ok(name)) {
		snprintf(j->err, j->errlen, "'%s' is not a handle name", name);
		return -EINVAL;
	}
	HASH_FIND_STR(j->gs->handles, name, h);
	if (!h) {
		h = *made = calloc(1, sizeof(**made));
		if (!h)
			return -ENOMEM;
		snprintf(h->name, sizeof(h->name), "%s", name);
	}
	*id = wl_pool_handle_id(sw_caching(j->d->sw), &h->h);
	return 0;
}

static int resolve_pool(struct graph_job *j, struct npa_pool_id *id, struct fs_handle **made)
{
	const char *pool = j->cmd.pool;

	*id = (struct npa_pool_id){ 0, 0 };
	if (!pool)
		return 0;
	if (strncmp(pool, "handle:", 7) == 0)
		return pool_of_handle(j, pool + 7, id, made);
	return pool_of_graph(j, pool, id);
}

static int begin(struct graph_job *j, struct fs_graph *e, bool enter)
{
	struct fs_handle *made = NULL;
	struct wl_capture c = { .device = j->cmd.device, .mode = j->cmd.mode, .enter = enter };
	/* With a plug-in current its pool hooks serve the capture, as upstream. */
	int rc = streams_get(&j->d->streams, j->cmd.device, j->cmd.stream, &c.stream, j->err,
			     j->errlen);
	if (rc == 0)
		rc = resolve_pool(j, &c.pool, &made);
	if (rc == 0)
		rc = wl_graph_capture_begin(sw_caching(j->d->sw), sw_allocator(j->d->sw), &e->g, &c,
					    j->err, j->errlen);
	if (rc) {
		free(made);
		return rc;
	}
	if (made)
		HASH_ADD_STR(j->gs->handles, name, made);
	e->stream = j->cmd.stream;
	e->mode = j->cmd.mode;
	e->begun = ++j->gs->captures;
	return 0;
}

/* NPUGraph.capture_begin: nothing else. */
static int run_capture_begin(struct graph_job *j, struct fs_graph *e)
{
	return begin(j, e, false);
}

/* torch.npu.graph(g, ...).__enter__: synchronize, empty_cache,
 * host_empty_cache, then capture_begin. */
static int run_enter(struct graph_job *j, struct fs_graph *e)
{
	return begin(j, e, true);
}

/* The runtime says which call of which thread invalidated a global
 * capture; in the mount that thread is the background replay's, and the
 * fix is the mount's words. */
static void hint_replay(struct graph_job *j, const struct fs_graph *e)
{
	size_t n = strlen(j->err);

	if (e->mode != ACL_MODEL_RI_CAPTURE_MODE_GLOBAL || !rw_running(&j->d->replay))
		return;
	snprintf(j->err + n, j->errlen - n,
		 ". The background replay (workload/replay) queries events while it runs: "
		 "capture with mode=thread_local, or stop the replay first "
		 "(echo stop > workload/replay)");
}

/* The capture ends on the stream it began on: the graph's own. */
static int run_capture_end(struct graph_job *j, struct fs_graph *e)
{
	struct npa_graph_info info;

	npa_graph_get_info(e->g, &info);
	int rc = npa_graph_capture_end(e->g, info.stream, j->err, j->errlen);
	if (rc == -EIO)
		hint_replay(j, e);
	return rc;
}

/* A replay writes again the tensor bytes its capture recorded, on any
 * stream of the device: their files' times move, or rsync would keep a
 * stale copy. */
static void touch_tensors(struct nmfs *d, int device)
{
	for (int i = 0; i <= TREE_STREAMS; i++) {
		struct tensor_store *ts = streams_store(&d->streams, device, i, false);
		if (ts)
			ts_touch_all(ts);
	}
}

/* Replays on the default stream unless stream=S is given. */
static int run_replay(struct graph_job *j, struct fs_graph *e)
{
	struct npa_graph_info info;
	aclrtStream s;

	npa_graph_get_info(e->g, &info);
	int rc = streams_get(&j->d->streams, info.device, j->cmd.stream < 0 ? 0 : j->cmd.stream,
			     &s, j->err, j->errlen);
	if (rc == 0)
		rc = npa_graph_replay(e->g, s, j->err, j->errlen);
	if (rc == 0)
		touch_tensors(j->d, info.device);
	return rc;
}

/* The bytes its captured writes kept go with the graph's model. */
static void release_staging(struct graph_job *j, const struct npa_graph_info *was,
			    int stream)
{
	struct tensor_store *ts;

	if (was->state == NPA_GRAPH_EMPTY || stream < 0)
		return;
	ts = streams_store(&j->d->streams, was->device, stream, false);
	if (ts != NULL)
		ts_release_staging(ts);
}

static int run_reset(struct graph_job *j, struct fs_graph *e)
{
	struct npa_graph_info was;

	npa_graph_get_info(e->g, &was);
	int rc = npa_graph_reset(e->g);

	release_staging(j, &was, e->stream);
	return rc;
}

static int run_destroy(struct graph_job *j, struct fs_graph *e)
{
	struct npa_graph_info was;

	npa_graph_get_info(e->g, &was);
	HASH_DEL(j->gs->by_name, e);
	npa_graph_free(e->g);
	release_staging(j, &was, e->stream);
	free(e);
	return 0;
}

static const struct graph_verb verbs[] = {
	{ "create", 0, run_create },
	{ "capture_begin", OPT_STREAM | OPT_POOL | OPT_MODE | OPT_DEVICE, run_capture_begin },
	{ "enter", OPT_STREAM | OPT_POOL | OPT_MODE | OPT_DEVICE, run_enter },
	{ "capture_end", 0, run_capture_end },
	{ "replay", OPT_STREAM, run_replay },
	{ "reset", 0, run_reset },
	{ "destroy", 0, run_destroy },
};

/* On the worker, under the registry's lock. */
static int run_job(void *arg)
{
	struct graph_job *j = arg;

	pthread_mutex_lock(&j->gs->lock);
	struct fs_graph *e = find_graph(j->gs, j->cmd.name);
	int rc = (e || j->cmd.verb->run == run_create) ? j->cmd.verb->run(j, e)
						       : no_graph(j, j->cmd.name);
	pthread_mutex_unlock(&j->gs->lock);
	return rc;
}

static int parse_option(struct nmfs *d, struct graph_cmd *c, const char *w, char *err,
			size_t errlen)
{
	unsigned allowed = c->verb->options;
	int rc;

	if ((allowed & OPT_STREAM) &&
	    (rc = ctl_int_option(w, "stream", TREE_STREAMS, &c->stream, err, errlen)))
		return rc < 0 ? rc : 0;
	if ((allowed & OPT_DEVICE) &&
	    (rc = ctl_int_option(w, "device", d->device_count - 1, &c->device, err, errlen)))
		return rc < 0 ? rc : 0;
	if ((allowed & OPT_POOL) && strncmp(w, "pool=", 5) == 0 && w[5]) {
		c->pool = w + 5;
		return 0;
	}
	if ((allowed & OPT_MODE) && strncmp(w, "mode=", 5) == 0)
		return npa_graph_parse_mode(w + 5, &c->mode, err, errlen);
	snprintf(err, errlen, "%s does not take '%s'", c->verb->name, w);
	return -EINVAL;
}

static const struct graph_verb *find_verb(const char *name)
{
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(verbs[i].name, name) == 0)
			return &verbs[i];
	return NULL;
}

static int parse(struct nmfs *d, const char *value, struct ctl_args *a,
		 struct graph_cmd *c, char *err, size_t errlen)
{
	int rc = ctl_split(value, a, err, errlen);

	if (rc)
		return rc;
	*c = (struct graph_cmd){ .name = a->word[1], .stream = -1,
				 .mode = ACL_MODEL_RI_CAPTURE_MODE_GLOBAL };
	c->verb = find_verb(a->word[0]);
	if (!c->verb) {
		snprintf(err, errlen, "'%s' is not create, capture_begin, enter, capture_end, "
			 "replay, reset or destroy", a->word[0]);
		return -EINVAL;
	}
	for (int i = 2; i < a->n && !rc; i++)
		rc = parse_option(d, c, a->word[i], err, errlen);
	if (rc == 0 && (c->verb->options & OPT_POOL) && c->stream < 0) {
		snprintf(err, errlen, "%s needs stream=S", c->verb->name);
		rc = -EINVAL;
	}
	return rc;
}

int store_graph(struct nmfs *d, const struct target *t, const char *value,
		uid_t caller, char *err, size_t errlen)
{
	struct ctl_args a;
	struct graph_job j = { .d = d, .gs = d->graphs, .err = err, .errlen = errlen };

	(void)t, (void)caller;
	int rc = parse(d, value, &a, &j.cmd, err, errlen);
	if (rc == 0 && !d->graphs->worker) {
		snprintf(err, errlen, "the graph thread did not start (see the log)");
		rc = -EIO;
	}
	if (rc == 0)
		rc = gw_run(d->graphs->worker, run_job, &j);
	if (rc == 0)
		dlog_printf(&d->log, "graph: %s", value);
	return rc;
}

aclrtStream graphs_current_stream(struct fs_graphs *gs, int device)
{
	struct fs_graph *e, *tmp;
	struct npa_graph_info info;
	aclrtStream current = NULL;
	uint64_t newest = 0;

	pthread_mutex_lock(&gs->lock);
	HASH_ITER(hh, gs->by_name, e, tmp) {
		npa_graph_get_info(e->g, &info);
		if (info.state == NPA_GRAPH_CAPTURING && e->begun > newest &&
		    (device < 0 || info.device == device)) {
			newest = e->begun;
			current = info.stream;
		}
	}
	pthread_mutex_unlock(&gs->lock);
	return current;
}

/* The pool's segments and bytes, 0 once it is gone. */
static void show_one(struct nmfs *d, const struct fs_graph *e, struct sbuf *out)
{
	struct npa_graph_info info;
	struct npa_pool_info pool = { 0 };
	char pool_name[48] = "-", stream[16] = "-";

	npa_graph_get_info(e->g, &info);
	if (!npa_pool_id_is_default(info.pool)) {
		report_pool_name(pool_name, sizeof(pool_name), info.pool);
		pool_find(d, info.device, info.pool, &pool);
	}
	if (e->stream >= 0)
		snprintf(stream, sizeof(stream), "%d", e->stream);
	sbuf_printf(out, "%-16s %-9s %6d %6s %-8s %10u %7llu %13zu %19llu\n", e->name,
		    npa_graph_state_name(info.state), info.device, stream, pool_name,
		    (unsigned)info.capture_id, (unsigned long long)info.replays,
		    pool.segments, (unsigned long long)pool.reserved_bytes);
}

int show_graph(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	struct fs_graphs *gs = d->graphs;
	struct fs_graph *e, *tmp;
	struct fs_handle *h, *htmp;

	sbuf_printf(out, "%-16s %-9s %6s %6s %-8s %10s %7s %13s %19s\n", "graph", "state",
		    "device", "stream", "pool", "capture_id", "replays", "pool_segments",
		    "pool_reserved_bytes");
	pthread_mutex_lock(&gs->lock);
	HASH_ITER(hh, gs->by_name, e, tmp)
		show_one(d, e, out);
	HASH_ITER(hh, gs->handles, h, htmp) {
		char name[48];
		report_pool_name(name, sizeof(name), h->h.id);
		sbuf_printf(out, "handle %s %s\n", h->name, name);
	}
	pthread_mutex_unlock(&gs->lock);
	return show_usage(d, t, out);
}
