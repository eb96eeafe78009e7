/*
 * allocators.c - ctl/allocator's listing of the allocators a switch holds.
 *
 * The current allocator, every plug-in loaded beside it, and every
 * retired one that still owns blocks or MemPool segments (those that own
 * none are gone or about to be), then the switch's count of refused
 * frees. Times are UTC, to the second.
 */
#include <stdint.h>
#include <time.h>

#include "alloc/switch/allocator_switch.h"

#include "report.h"

static void plugin_hooks(struct sbuf *out, const struct sw_info *a)
{
	if (a->nhooks == 0)
		sbuf_puts(out, "none");
	for (size_t i = 0; i < a->nhooks; i++)
		sbuf_printf(out, "%s%s=%s", i ? " " : "", a->hooks[i].hook,
			    a->hooks[i].fn);
}

static void allocator(struct sbuf *out, const struct sw_info *a)
{
	char when[32];
	struct tm tm;

	gmtime_r(&a->since, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	/* A plug-in that faulted is retired though a "load" still holds it. */
	sbuf_printf(out, "%s %s\n", a->current ? "current"
		    : a->kept && !a->faulted ? "loaded" : "retired", a->name);
	if (a->kind == SW_PLUGIN) {
		sbuf_printf(out, "  path %s\n  alloc %s\n  free %s\n  hooks ",
			    a->path, a->alloc_name, a->free_name);
		plugin_hooks(out, a);
		sbuf_printf(out, "\n  loaded %s\n", when);
	} else {
		sbuf_printf(out, "  since %s\n", when);
	}
	sbuf_printf(out, "  live_blocks %llu\n  live_bytes %llu\n",
		    (unsigned long long)a->live_blocks,
		    (unsigned long long)a->live_bytes);
	if (a->kind == SW_PLUGIN)
		sbuf_printf(out, "  refused_unaligned %llu\n  refused_overlap %llu\n"
			    "  refused_not_device %llu\n  null_returns %llu\n"
			    "  mempools %u\n  mempool_segments %llu\n  mempool_bytes %llu\n",
			    (unsigned long long)a->guard.refused_unaligned,
			    (unsigned long long)a->guard.refused_overlap,
			    (unsigned long long)a->guard.refused_not_device,
			    (unsigned long long)a->guard.null_returns, a->mempools,
			    (unsigned long long)a->guard.lent_blocks,
			    (unsigned long long)a->guard.lent_bytes);
}

int report_allocators(struct sbuf *out, const struct sw_info *all, size_t n,
		      uint64_t refused_frees)
{
	for (size_t i = 0; i < n; i++)
		if (all[i].current || all[i].kept || all[i].live_blocks || all[i].mempools)
			allocator(out, &all[i]);
	sbuf_printf(out, "refused_frees %llu\n", (unsigned long long)refused_frees);
	return out->error;
}
