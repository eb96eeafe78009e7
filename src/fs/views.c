/*
 * views.c - what each read-only file shows.
 *
 * Every view copies the current allocator's state first (sw_get_stats,
 * sw_snapshot) and formats the copy, so no allocator lock is held while
 * text is made.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <acl/acl_rt.h>
#include "report/report.h"

#include "daemon.h"
#include "nodes.h"

SHOW(show_readme)
{
	(void)e;
	sbuf_printf(out,
		    "npumemfs %s: a caching allocator and a simulated NPU, as files.\n"
		    "Flavor %s, %d device%s; N below is a device number (0..%d).\n"
		    "Content is made when a file is opened: one cat shows one moment.\n"
		    "Files are read-only (0444) or read-write for the owner (0600);\n"
		    "a failed write changes nothing, and its reason is logged and shown\n"
		    "as last_error when that file is read.\n\n",
		    NPUMEMFS_VERSION, d->flavor->name, d->device_count,
		    d->device_count == 1 ? "" : "s", d->device_count - 1);
	return tree_format_readme(out);
}

SHOW(show_config)
{
	(void)e;
	return sbuf_puts(out, d->config_text);
}

SHOW(show_log)
{
	(void)e;
	return dlog_format(&d->log, out);
}

static int stats_of(struct nmfs *d, const struct entry *e, struct npa_stats *s)
{
	return sw_get_stats(d->sw, e->device, s);
}

SHOW(show_stats)
{
	struct npa_stats s;
	int rc = stats_of(d, e, &s);

	return rc ? rc : report_stats_flat(out, &s, d->flavor);
}

SHOW(show_stats_json)
{
	struct npa_stats s;
	int rc = stats_of(d, e, &s);

	return rc ? rc : report_stats_json(out, &s, d->flavor);
}

SHOW(show_summary)
{
	struct npa_stats s;
	int rc = stats_of(d, e, &s);

	return rc ? rc : report_summary(out, &s, d->flavor, e->device, false);
}

SHOW(show_snapshot_json)
{
	struct npa_snapshot snap = { 0 };
	int rc = sw_snapshot(d->sw, e->device, &snap);

	if (rc == 0)
		rc = report_snapshot_json(out, &snap);
	npa_snapshot_release(&snap);
	return rc;
}

/* One number a file, sysfs style. */
#define STAT_VALUE(fn, field, member)                                          \
	SHOW(fn)                                                               \
	{                                                                      \
		struct npa_stats s;                                            \
		int rc = stats_of(d, e, &s);                                   \
		if (rc)                                                        \
			return rc;                                             \
		return sbuf_printf(out, "%lld\n",                              \
				   (long long)s.field[NPA_STAT_ALL].member);   \
	}

STAT_VALUE(show_memory_allocated, allocated_bytes, current)
STAT_VALUE(show_max_memory_allocated, allocated_bytes, peak)
STAT_VALUE(show_memory_reserved, reserved_bytes, current)
STAT_VALUE(show_max_memory_reserved, reserved_bytes, peak)

SHOW(show_mem_info)
{
	size_t free_bytes, total;

	(void)d;
	if (aclrtSetDevice(e->device) != ACL_SUCCESS ||
	    aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total) != ACL_SUCCESS)
		return -EIO;
	return sbuf_printf(out, "%zu %zu\n", free_bytes, total);
}

SHOW(show_memory_fraction)
{
	return sbuf_printf(out, "%g\n", sw_get_memory_fraction(d->sw, e->device));
}

SHOW(show_replay)
{
	char last[TREE_ERRLEN];
	int rc = rw_format(&d->replay, out);

	if (rc)
		return rc;
	tree_get_error(&d->tree, e, last, sizeof(last));
	sbuf_printf(out, "usage: %s\nlast_error: %s\n", e->node->usage, last);
	return out->error;
}

/* ctl/allocator: the allocators in use, then the usual usage and last_error. */
SHOW(show_allocator)
{
	char last[TREE_ERRLEN];
	struct sw_info *all;
	size_t n;

	if (sw_list(d->sw, &all, &n))
		return -ENOMEM;
	report_allocators(out, all, n, sw_refused_frees(d->sw));
	free(all);
	tree_get_error(&d->tree, e, last, sizeof(last));
	sbuf_printf(out, "usage: echo VALUE > %s, VALUE: %s\nlast_error: %s\n",
		    e->name, e->node->usage, last);
	return out->error;
}

/* allocators/NAME.deviceN: memory_stats of one allocator alone. */
int show_allocator_stats(struct nmfs *d, unsigned id, int device,
			 struct sbuf *out)
{
	struct npa_stats s;
	int rc = sw_get_stats_of(d->sw, id, device, &s);

	return rc ? rc : report_stats_flat(out, &s, d->flavor);
}

/* ctl/alloc_conf: the built-in allocator's settings, each with its origin. */
SHOW(show_alloc_conf)
{
	char last[TREE_ERRLEN];
	struct npa_conf conf;

	npa_get_conf(d->alloc, &conf);
	int rc = npa_conf_print(out, &conf, d->flavor);
	if (rc < 0)
		return rc;
	tree_get_error(&d->tree, e, last, sizeof(last));
	sbuf_printf(out, "usage: echo VALUE > %s, VALUE: %s\nlast_error: %s\n",
		    e->name, e->node->usage, last);
	return out->error;
}

/* oom/deviceN: empty until the device's first OOM, so `test -s` tells. */
SHOW(show_oom)
{
	char text[NPA_ERRLEN];
	int rc = npa_last_oom(d->alloc, e->device, text, sizeof(text));

	if (rc || !text[0])
		return rc;
	return sbuf_printf(out, "%s\n", text);
}

SHOW(show_prometheus)
{
	struct npa_stats s[NPA_MAX_DEVICES];

	(void)e;
	for (int i = 0; i < d->device_count; i++) {
		int rc = sw_get_stats(d->sw, i, &s[i]);
		if (rc)
			return rc;
	}
	return report_prometheus(out, s, d->device_count, d->flavor);
}
