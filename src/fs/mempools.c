/*
 * mempools.c - ctl/mempool: "VERB M [...]" writes that do what
 * torch.npu.MemPool and use_mem_pool do, and the file's listing of the
 * pools so named.
 *
 * The calls and their order are workload/graph_driver.h's, as a replayed
 * trace makes them; here are the words, the names, and what a name
 * brings (a MemPool that exists already or not yet, one released while it
 * still routes a stream). use_mem_pool's enter routes the allocations on
 * one stream. MemPool(allocator=...) names a loaded plug-in: the pool's
 * segments come from it and go back to it (alloc/allocator_switch_lend.c).
 * With a plug-in current, use_mem_pool's calls are its pool hooks, and
 * MemPool() is what the flavor's upstream makes of it (graph_driver.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "alloc/switch/allocator_switch.h"
#include "report/report.h"
#include "workload/graph_driver.h"

#include "ctl_args.h"
#include "daemon.h"
#include "mempools.h"
#include "nodes.h"
#include "pools.h"

struct fs_mempool {
	char name[CTL_NAME_MAX + 1];
	struct wl_mempool mp;
	UT_hash_handle hh;
};

struct fs_mempools {
	pthread_mutex_t lock;
	struct fs_mempool *by_name;
};

struct mempool_cmd {
	struct nmfs *d;
	struct ctl_args a;
	struct fs_mempool *m;  /* the one named, NULL if none */
	char *err;
	size_t errlen;
};

int mempools_new(struct fs_mempools **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	pthread_mutex_init(&(*out)->lock, NULL);
	return 0;
}

void mempools_free(struct fs_mempools *mp, struct npa *a)
{
	struct fs_mempool *m, *tmp;

	if (!mp)
		return;
	HASH_ITER(hh, mp->by_name, m, tmp) {
		wl_mempool_drop(a, &m->mp, NULL, 0);
		HASH_DEL(mp->by_name, m);
		free(m);
	}
	pthread_mutex_destroy(&mp->lock);
	free(mp);
}

struct create_args {
	bool use_on_oom;
	bool no_split;
	int device;
	const char *allocator; /* NULL: the device's memory */
};

/* "use_on_oom", "no_split", "device=D", "allocator=pluginK" after the name. */
static int parse_create(struct mempool_cmd *c, struct create_args *o)
{
	for (int i = 2; i < c->a.n; i++) {
		const char *w = c->a.word[i];
		int rc = ctl_int_option(w, "device", c->d->device_count - 1, &o->device, c->err,
					c->errlen);
		if (rc < 0)
			return rc;
		if (rc)
			continue;
		if (strcmp(w, "use_on_oom") == 0)
			o->use_on_oom = true;
		else if (strcmp(w, "no_split") == 0)
			o->no_split = true;
		else if (strncmp(w, "allocator=", 10) == 0 && w[10] != '\0')
			o->allocator = w + 10;
		else {
			snprintf(c->err, c->errlen, "create does not take '%s'", w);
			return -EINVAL;
		}
	}
	return 0;
}

/* MemPool(allocator=pluginK): the plug-in is looked up once the id is
 * taken, as a refused name still used one up. */
static int create(struct mempool_cmd *c, struct fs_mempool *m, const struct create_args *o)
{
	struct npa *a = sw_caching(c->d->sw);
	struct allocator pools = sw_allocator(c->d->sw);
	struct npa_segment_source src;
	int rc;

	wl_pool_handle_id(a, &m->mp.handle);
	if (!o->allocator)
		return wl_mempool_create(a, pools, &m->mp, o->device, o->use_on_oom, o->no_split,
					 NULL, c->err, c->errlen);
	rc = sw_mempool_source(c->d->sw, o->allocator, &src, c->err, c->errlen);
	return rc ? rc : wl_mempool_create(a, pools, &m->mp, o->device, o->use_on_oom,
					   o->no_split, &src, c->err, c->errlen);
}

static int run_create(struct mempool_cmd *c)
{
	struct create_args o = { 0 };
	int rc = parse_create(c, &o);

	if (rc)
		return rc;
	if (c->m) {
		snprintf(c->err, c->errlen, "mempool %s exists", c->m->name);
		return -EEXIST;
	}
	struct fs_mempool *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	snprintf(m->name, sizeof(m->name), "%s", c->a.word[1]);
	rc = create(c, m, &o);
	if (rc) {
		free(m);
		return rc;
	}
	HASH_ADD_STR(c->d->mempools->by_name, name, m);
	return 0;
}

/* Exactly one more word, "stream=S"; 0 is the default stream. */
static int parse_stream(struct mempool_cmd *c, int *stream)
{
	int rc = c->a.n == 3 ? ctl_int_option(c->a.word[2], "stream", TREE_STREAMS, stream,
					       c->err, c->errlen)
			     : 0;

	if (rc == 0) {
		snprintf(c->err, c->errlen, "begin takes stream=S and nothing else");
		return -EINVAL;
	}
	return rc < 0 ? rc : 0;
}

/* A refused write changes nothing: the use upstream takes before it
 * refuses is given back. */
static int run_begin(struct mempool_cmd *c)
{
	struct fs_mempool *m = c->m;
	aclrtStream s;
	int stream;
	int rc = parse_stream(c, &stream);

	if (rc == 0)
		rc = streams_get(&c->d->streams, m->mp.device, stream, &s, c->err, c->errlen);
	if (rc == 0)
		rc = wl_mempool_begin(sw_caching(c->d->sw), &m->mp, s, stream, WL_REFUSAL_UNDONE,
				      c->err, c->errlen);
	return rc;
}

static int run_end(struct mempool_cmd *c)
{
	return wl_mempool_end(sw_caching(c->d->sw), &c->m->mp, c->err, c->errlen);
}

/* The object goes, whatever its destructor meets: a routing still under
 * way would outlive its name. */
static int run_release(struct mempool_cmd *c)
{
	struct fs_mempool *m = c->m;

	if (m->mp.routing) {
		snprintf(c->err, c->errlen, "mempool %s still routes stream %d: end it first",
			 m->name, m->mp.stream);
		return -EBUSY;
	}
	wl_mempool_release(sw_caching(c->d->sw), &m->mp, NULL, 0);
	HASH_DEL(c->d->mempools->by_name, m);
	free(m);
	return 0;
}

static int run_empty(struct mempool_cmd *c)
{
	return npa_empty_cache_pool(sw_caching(c->d->sw), c->m->mp.device, c->m->mp.handle.id);
}

static const struct {
	const char *name;
	int (*run)(struct mempool_cmd *c);
} verbs[] = {
	{ "create", run_create },
	{ "begin", run_begin },
	{ "end", run_end },
	{ "release", run_release },
	{ "empty", run_empty },
};

static int dispatch(struct mempool_cmd *c)
{
	const char *verb = c->a.word[0];

	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		if (strcmp(verbs[i].name, verb) != 0)
			continue;
		if (!c->m && verbs[i].run != run_create) {
			snprintf(c->err, c->errlen, "no mempool %s (create it first)",
				 c->a.word[1]);
			return -ENOENT;
		}
		if (verbs[i].run != run_create && verbs[i].run != run_begin && c->a.n > 2) {
			snprintf(c->err, c->errlen, "%s takes only a name", verb);
			return -EINVAL;
		}
		return verbs[i].run(c);
	}
	snprintf(c->err, c->errlen, "'%s' is not create, begin, end, release or empty", verb);
	return -EINVAL;
}

int store_mempool(struct nmfs *d, const struct target *t, const char *value,
		  uid_t caller, char *err, size_t errlen)
{
	struct mempool_cmd c = { .d = d, .err = err, .errlen = errlen };
	struct fs_mempools *mp = d->mempools;

	(void)t, (void)caller;
	int rc = ctl_split(value, &c.a, err, errlen);
	if (rc)
		return rc;
	pthread_mutex_lock(&mp->lock);
	HASH_FIND_STR(mp->by_name, c.a.word[1], c.m);
	rc = dispatch(&c);
	pthread_mutex_unlock(&mp->lock);
	sw_unload_dropped(d->sw);
	if (rc == 0)
		dlog_printf(&d->log, "mempool: %s", value);
	return rc;
}

static void show_one(struct nmfs *d, const struct fs_mempool *m, struct sbuf *out)
{
	struct npa_pool_info info = { 0 };
	char pool[48], routing[24] = "-";

	report_pool_name(pool, sizeof(pool), m->mp.handle.id);
	int pool_found = pool_find(d, m->mp.device, m->mp.handle.id, &info);
	if (m->mp.routing)
		snprintf(routing, sizeof(routing), "stream%d", m->mp.stream);
	/* No pool yet: a MemPool that is only an id until a use_mem_pool. */
	const char *allocator = pool_found < 0 ? "-" : info.allocator[0] ? info.allocator
									 : "caching";
	sbuf_printf(out, "%-16s %6d %-8s %9d %-8s %s\n", m->name, m->mp.device, pool,
		    info.use_count, routing, allocator);
}

int show_mempool(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	struct fs_mempools *mp = d->mempools;
	struct fs_mempool *m, *tmp;

	sbuf_printf(out, "%-16s %6s %-8s %9s %-8s %s\n", "mempool", "device", "pool",
		    "use_count", "routing", "allocator");
	pthread_mutex_lock(&mp->lock);
	HASH_ITER(hh, mp->by_name, m, tmp)
		show_one(d, m, out);
	pthread_mutex_unlock(&mp->lock);
	return show_usage(d, t, out);
}
