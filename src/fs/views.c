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
#include "base/double_text.h"
#include "report/report.h"

#include "daemon.h"
#include "nodes.h"

int show_readme(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	(void)t;
	sbuf_printf(out,
		    "npumemfs %s: a caching allocator and a simulated NPU, as files.\n"
		    "Flavor %s, %d device%s; N below is a device number (0..%d),\n"
		    "NAME the name of a file that comes and goes.\n"
		    "Content is made when a file is opened: one cat shows one moment.\n"
		    "Files are read-only (0444) or read-write for the owner (0600);\n"
		    "a failed write changes nothing, and its reason is logged and shown\n"
		    "as last_error when that file is read.\n\n",
		    NPUMEMFS_VERSION, d->flavor->name, d->device_count,
		    d->device_count == 1 ? "" : "s", d->device_count - 1);
	return tree_format_readme(out);
}

int show_config(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	(void)t;
	return sbuf_puts(out, d->config_text);
}

static int stats_of(struct nmfs *d, const struct target *t, struct npa_stats *s)
{
	return sw_get_stats(d->sw, t->device, s);
}

int show_stats(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	struct npa_stats s;
	int rc = stats_of(d, t, &s);

	return rc ? rc : report_stats_flat(out, &s, d->flavor);
}

int show_stats_json(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	struct npa_stats s;
	int rc = stats_of(d, t, &s);

	return rc ? rc : report_stats_json(out, &s, d->flavor);
}

int show_summary(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	struct npa_stats s;
	int rc = stats_of(d, t, &s);

	return rc ? rc : report_summary(out, &s, d->flavor, t->device, false);
}

int show_snapshot_json(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	struct npa_snapshot snap = { 0 };
	int rc = sw_snapshot(d->sw, t->device, &snap);

	if (rc == 0)
		rc = report_snapshot_json(out, &snap);
	npa_snapshot_release(&snap);
	return rc;
}

int show_snapshot_svg(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	struct npa_snapshot snap = { 0 };
	int rc = sw_snapshot(d->sw, t->device, &snap);

	if (rc == 0)
		rc = report_snapshot_svg(out, &snap, t->device);
	npa_snapshot_release(&snap);
	return rc;
}

int show_history_svg(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	struct report_sample *s;
	size_t n;
	int rc = sampler_copy(&d->sampler, t->device, &s, &n);

	if (rc == 0)
		rc = report_history_svg(out, s, n, t->device);
	free(s);
	return rc;
}

enum byte_stat { ALLOCATED, RESERVED };
enum byte_value { CURRENT, PEAK };

/* One number a file, sysfs style: a byte stat of the whole device. */
static int show_bytes(struct nmfs *d, const struct target *t, struct sbuf *out,
		      enum byte_stat which, enum byte_value value)
{
	struct npa_stats s;
	int rc = stats_of(d, t, &s);

	if (rc)
		return rc;
	const struct npa_stat *st = which == RESERVED ? &s.reserved_bytes[NPA_STAT_ALL]
						      : &s.allocated_bytes[NPA_STAT_ALL];
	return sbuf_printf(out, "%lld\n", (long long)(value == PEAK ? st->peak : st->current));
}

int show_memory_allocated(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	return show_bytes(d, t, out, ALLOCATED, CURRENT);
}

int show_max_memory_allocated(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	return show_bytes(d, t, out, ALLOCATED, PEAK);
}

int show_memory_reserved(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	return show_bytes(d, t, out, RESERVED, CURRENT);
}

int show_max_memory_reserved(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	return show_bytes(d, t, out, RESERVED, PEAK);
}

int show_mem_info(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	size_t free_bytes, total;

	(void)d;
	if (aclrtSetDevice(t->device) != ACL_SUCCESS ||
	    aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total) != ACL_SUCCESS)
		return -EIO;
	return sbuf_printf(out, "%zu %zu\n", free_bytes, total);
}

/*
 * One value, sysfs style, on the first line (for head -n 1 and read), the
 * last refusal below it, as every writable file shows one. The value is
 * written as the fewest digits that read back as the fraction set.
 */
int show_memory_fraction(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	char text[DOUBLE_TEXT_LEN], last[TREE_ERRLEN];

	double_text(text, sw_get_memory_fraction(d->sw, t->device));
	tree_get_error(&d->errors, t, last, sizeof(last));
	return sbuf_printf(out, "%s\nlast_error: %s\n", text, last);
}

int show_replay(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	char last[TREE_ERRLEN];
	int rc = rw_format(&d->replay, out);

	if (rc)
		return rc;
	tree_get_error(&d->errors, t, last, sizeof(last));
	sbuf_printf(out, "usage: %s\nlast_error: %s\n", t->node->usage, last);
	return out->error;
}

/* ctl/allocator: the allocators in use, then the usual usage and last_error. */
int show_allocator(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	struct sw_info *all;
	size_t n;

	if (sw_list(d->sw, &all, &n))
		return -ENOMEM;
	report_allocators(out, all, n, sw_refused_frees(d->sw));
	free(all);
	return show_usage(d, t, out);
}

/* allocators/NAME.deviceN: memory_stats of one allocator alone. */
int show_allocator_stats(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	struct npa_stats s;
	int rc = sw_get_stats_of(d->sw, t->id, t->device, &s);

	return rc ? rc : report_stats_flat(out, &s, d->flavor);
}

/* ctl/alloc_conf: the built-in allocator's settings, each with its origin. */
int show_alloc_conf(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	struct npa_conf conf;

	npa_get_conf(sw_caching(d->sw), &conf);
	int rc = npa_conf_print(out, &conf, d->flavor);
	if (rc < 0)
		return rc;
	return show_usage(d, t, out);
}

/* oom/deviceN: empty until the device's first OOM, so `test -s` tells;
 * upstream's message on the first line, why it ran out below. */
int show_oom(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	char text[NPA_ERRLEN];
	struct npa_oom_why why;
	int rc = npa_last_oom(sw_caching(d->sw), t->device, text, sizeof(text), &why);

	if (rc || !text[0])
		return rc;
	sbuf_printf(out, "%s\n", text);
	return report_oom_why(out, &why);
}

int show_prometheus(struct nmfs *d, const struct target *t, struct sbuf *out)
{
	struct npa_stats s[NPA_MAX_DEVICES];

	(void)t;
	for (int i = 0; i < d->device_count; i++) {
		int rc = sw_get_stats(d->sw, i, &s[i]);
		if (rc)
			return rc;
	}
	int rc = report_prometheus(out, s, d->device_count, d->flavor);
	if (rc == 0)
		rc = show_pool_metrics(d, out);
	return rc ? rc : show_host_metrics(d, out);
}
