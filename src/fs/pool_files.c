/*
 * pools/deviceN[.json] and snapshot/deviceN.pools/NAME.json: the built-in
 * allocator's private pools, whichever allocator is current, then the
 * pools a plug-in was asked to route to (a capture while it was current).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

#include "daemon.h"
#include "nodes.h"
#include "pools.h"

bool pool_parse_name(const char *name, struct npa_pool_id *id)
{
	char again[64];
	uint64_t first, second;

	if (sscanf(name, "%" SCNu64 "_%" SCNu64, &first, &second) != 2)
		return false;
	*id = (struct npa_pool_id){ first, second };
	/* Only the spelling report_pool_name makes: no signs, no zeros ahead. */
	report_pool_name(again, sizeof(again), *id);
	return strcmp(again, name) == 0;
}

typedef int (*pools_format_fn)(struct sbuf *out, const struct npa_pool_info *pools,
			       size_t n);

/* A plug-in's pools as rows of the list: what the plug-in holds in them is
 * its own to say, so only the id, the uses, the routing and its name. */
static int add_plugin_pools(struct nmfs *d, int device, struct npa_pool_info **all,
			    size_t *n)
{
	struct sw_pool_info *p = NULL;
	size_t k = 0;
	int rc = sw_pools_of(d->sw, device, &p, &k);
	struct npa_pool_info *grown = rc || !k ? NULL : realloc(*all, (*n + k) * sizeof(**all));

	if (rc == 0 && k && !grown)
		rc = -ENOMEM;
	for (size_t i = 0; grown && i < k; i++) {
		struct npa_pool_info *row = &grown[(*n)++];
		*row = (struct npa_pool_info){ .id = p[i].id, .use_count = (int)p[i].uses,
					       .routing = p[i].scopes > 0 };
		snprintf(row->allocator, sizeof(row->allocator), "%s", p[i].allocator);
	}
	if (grown)
		*all = grown;
	free(p);
	return rc;
}

/* Every pool of the device: the caching allocator's, then a plug-in's. */
static int list_all(struct nmfs *d, int device, struct npa_pool_info **all, size_t *n)
{
	int rc = npa_pool_list(sw_caching(d->sw), device, all, n);

	return rc ? rc : add_plugin_pools(d, device, all, n);
}

/* The last row of the id wins: a plug-in's, when one was asked to route
 * a pool the caching allocator also holds. */
int pool_find(struct nmfs *d, int device, struct npa_pool_id id,
	      struct npa_pool_info *out)
{
	struct npa_pool_info *all = NULL;
	size_t n = 0;
	int rc = list_all(d, device, &all, &n);

	if (rc)
		return rc;
	rc = -ENOENT;
	for (size_t i = 0; i < n; i++) {
		if (npa_pool_id_eq(all[i].id, id)) {
			*out = all[i];
			rc = 0;
		}
	}
	free(all);
	return rc;
}

static int show_list(struct nmfs *d, const struct target *t, struct sbuf *out,
		     pools_format_fn format)
{
	struct npa_pool_info *all = NULL;
	size_t n = 0;
	int rc = list_all(d, t->device, &all, &n);

	if (rc == 0)
		rc = format(out, all, n);
	free(all);
	return rc;
}

int show_pools(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	return show_list(d, t, out, report_pools_text);
}

int show_pools_json(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	return show_list(d, t, out, report_pools_json);
}

/* memory_snapshot(mempool_id): the segments of one pool. */
int show_pool_snapshot(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	struct npa_snapshot snap = { 0 };
	struct npa_pool_id id;

	if (!pool_parse_name(t->name, &id))
		return -ENOENT;
	int rc = npa_snapshot_pool(sw_caching(d->sw), t->device, id, &snap);
	if (rc == 0)
		rc = report_snapshot_json(out, &snap);
	npa_snapshot_release(&snap);
	return rc;
}

static int list_pools(struct nmfs *d, const struct target *t, name_visit_fn fn,
		      void *arg)
{
	struct npa_pool_info *all = NULL;
	size_t n = 0;
	int rc = npa_pool_list(sw_caching(d->sw), t->device, &all, &n);

	for (size_t i = 0; i < n && !rc; i++) {
		char name[48];
		report_pool_name(name, sizeof(name), all[i].id);
		rc = fn(arg, name);
	}
	free(all);
	return rc;
}

static int lookup_pool(struct nmfs *d, struct target *t)
{
	struct npa_pool_info info;
	struct npa_pool_id id;

	if (!pool_parse_name(t->name, &id))
		return -ENOENT;
	return pool_find(d, t->device, id, &info);
}

const struct node_index pool_index = {
	.list = list_pools,
	.lookup = lookup_pool,
};

/* The pool gauges of every device, after the stats (report_prometheus_pools). */
int show_pool_metrics(struct nmfs *d, struct sbuf *out)
{
	struct npa_pool_info *lists[NPA_MAX_DEVICES] = { 0 };
	size_t counts[NPA_MAX_DEVICES] = { 0 };
	int rc = 0;

	for (int i = 0; i < d->device_count && !rc; i++)
		rc = npa_pool_list(sw_caching(d->sw), i, &lists[i], &counts[i]);
	if (rc == 0)
		rc = report_prometheus_pools(out, (const struct npa_pool_info *const *)lists,
					     counts, d->device_count);
	for (int i = 0; i < d->device_count; i++)
		free(lists[i]);
	return rc;
}
