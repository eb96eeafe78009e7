/*
 * host_files.c - the pinned host allocator as files: host/stats,
 * host/stats.json, host/blocks, pools/host, pinned/NAME (a pin_memory()
 * tensor as a file) and the host_empty_cache and host stat reset controls.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/host/host_allocator.h"
#include "daemon.h"
#include "graphs.h"
#include "nodes.h"
#include "report/report.h"
#include "workload/pinned_store.h"

static struct npa_host *host(struct nmfs *d)
{
	return npa_host_of(sw_caching(d->sw));
}

int show_host_stats(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	struct npa_host_stats s;

	(void)t;
	npa_host_get_stats(host(d), &s);
	return report_host_stats_flat(out, &s);
}

int show_host_stats_json(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	struct npa_host_stats s;

	(void)t;
	npa_host_get_stats(host(d), &s);
	return report_host_stats_json(out, &s);
}

int show_host_metrics(struct nmfs *d, struct sbuf *out)
{
	struct npa_host_stats s;

	npa_host_get_stats(host(d), &s);
	return report_prometheus_host(out, &s);
}

int show_host_blocks(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	struct npa_host_block_info *b = NULL;
	size_t n = 0;
	int rc = npa_host_blocks(host(d), &b, &n);

	(void)t;
	if (rc == 0)
		rc = report_host_blocks(out, b, n);
	free(b);
	return rc;
}

int show_host_pools(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	struct npa_host_pool_info *p = NULL;
	size_t n = 0;
	int rc = npa_host_pools(host(d), &p, &n);

	(void)t;
	if (rc == 0)
		rc = report_host_pools(out, p, n);
	free(p);
	return rc;
}

/* The host controls take "1" alone: there is one host. */
static int host_action(struct nmfs *d, const char *value, void (*fn)(struct npa_host *),
		       const char *what, char *err, size_t errlen)
{
	if (strcmp(value, "1") != 0) {
		snprintf(err, errlen, "'%s' is not 1 (the host allocator is one)", value);
		return -EINVAL;
	}
	fn(host(d));
	dlog_printf(&d->log, "%s", what);
	return 0;
}

int store_host_empty_cache(struct nmfs *d, const struct target *t, const char *value,
			   uid_t caller, char *err, size_t errlen)
{
	(void)t, (void)caller;
	return host_action(d, value, npa_host_empty_cache, "host_empty_cache", err, errlen);
}

int store_reset_peak_host_stats(struct nmfs *d, const struct target *t, const char *value,
				uid_t caller, char *err, size_t errlen)
{
	(void)t, (void)caller;
	return host_action(d, value, npa_host_reset_peak_stats, "reset_peak_host_memory_stats",
			   err, errlen);
}

int store_reset_accumulated_host_stats(struct nmfs *d, const struct target *t,
				       const char *value, uid_t caller, char *err, size_t errlen)
{
	(void)t, (void)caller;
	return host_action(d, value, npa_host_reset_accumulated_stats,
			   "reset_accumulated_host_memory_stats", err, errlen);
}

/* ---- pinned/NAME ---- */

static int list_pinned(struct nmfs *d, const struct target *t, name_visit_fn fn, void *arg)
{
	(void)t;
	return ps_list(d->pinned, fn, arg);
}

static int lookup_pinned(struct nmfs *d, struct target *t)
{
	uint64_t size;

	return ps_size(d->pinned, t->name, &size, NULL);
}

const struct node_index pinned_index = {
	.list = list_pinned,
	.lookup = lookup_pinned,
};

static int pinned_size(struct nmfs *d, const struct target *t, uint64_t *size,
		       struct timespec *changed)
{
	return ps_size(d->pinned, t->name, size, changed);
}

static int pinned_create(struct nmfs *d, const struct target *t)
{
	return ps_create(d->pinned, t->name);
}

static int pinned_unlink(struct nmfs *d, const struct target *t)
{
	return ps_unlink(d->pinned, t->name);
}

/* pin_memory() on the graph thread's current stream: during a capture
 * the pin goes to the graph's host pool. A refused pin explains itself
 * in the log, as a tensor's OOM. */
static int pinned_resize(struct nmfs *d, const struct target *t, uint64_t size)
{
	char err[NPA_ERRLEN] = "";
	int rc = ps_resize(d->pinned, t->name, size, graphs_current_stream(d->graphs, -1), err,
			   sizeof(err));

	if (rc < 0 && err[0])
		dlog_printf(&d->log, "pinned/%s: %s", t->name, err);
	return rc;
}

static ssize_t pinned_read(struct nmfs *d, const struct target *t, char *buf, size_t size,
			   uint64_t off)
{
	return ps_read(d->pinned, t->name, buf, size, off);
}

static ssize_t pinned_write(struct nmfs *d, const struct target *t, const char *buf,
			    size_t size, uint64_t off)
{
	return ps_write(d->pinned, t->name, buf, size, off);
}

const struct data_ops pinned_data = {
	.size = pinned_size,
	.create = pinned_create,
	.unlink = pinned_unlink,
	.resize = pinned_resize,
	.read = pinned_read,
	.write = pinned_write,
};
