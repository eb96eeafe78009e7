/*
 * alloc_conf.c - the settings' defaults and the roundup divisions a size
 * gets.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "alloc_conf_impl.h"

#define LARGE_BUFFER (20 * MiB)    /* kLargeBuffer */

void npa_conf_default(struct npa_conf *conf, const struct npa_flavor *flavor)
{
	memset(conf, 0, sizeof(*conf));
	conf->max_split_size = SIZE_MAX;
	conf->max_non_split_rounding = LARGE_BUFFER;
	conf->large_segment_size = LARGE_BUFFER;
	conf->per_process_memory_fraction = 1.0;
	conf->base_addr_aligned = conf_dialect_of(flavor)->base_addr_aligned;
	conf->pinned_max_round_threshold = SIZE_MAX;
	conf->pinned_max_cached_size = SIZE_MAX;
}

/* NPUAllocatorConfig::parseArgs: unset thresholds are size_t's max. */
const char *npa_conf_pinned_warning(const struct npa_conf *conf)
{
	if (!conf->pin_memory_expandable_segments ||
	    (conf->pinned_max_round_threshold == SIZE_MAX &&
	     conf->pinned_max_cached_size == SIZE_MAX))
		return NULL;
	return "`pinned_max_round_threshold_mb` and `pinned_max_cached_size_mb` do not take "
	       "effect when `pin_memory_expandable_segments` is enabled. To use these options, "
	       "set `pin_memory_expandable_segments` to `False`.";
}

bool npa_conf_warning(const struct npa_conf *conf, char *buf, size_t len)
{
	const char *w = npa_conf_pinned_warning(conf);

	if (w)
		snprintf(buf, len, "alloc_conf: %s", w);
	return w != NULL;
}

/* Interval index of a size: floor(log2(size)) - 20, clamped to 0..15. */
static unsigned divisions_index(size_t size)
{
	if (size == 0)
		return 0;
	int log2 = 63 - __builtin_clzll((unsigned long long)size);
	int idx = log2 - 20;
	if (idx < 0)
		idx = 0;
	if (idx > NPA_ROUNDUP_INTERVALS - 1)
		idx = NPA_ROUNDUP_INTERVALS - 1;
	return (unsigned)idx;
}

unsigned npa_conf_divisions(const struct npa_conf *conf, size_t size)
{
	return conf->roundup_power2_divisions[divisions_index(size)];
}
