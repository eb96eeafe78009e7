/*
 * stats_flat.c - memory_stats(): one "key value" line per stat, sorted by
 * key the way Python sorts the OrderedDict it returns.
 */
#include <inttypes.h>

#include "report.h"

#include "stat_keys.h"

int stat_kv_flat(struct sbuf *out, const struct stat_kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sbuf_printf(out, "%s %" PRId64 "\n", kv[i].key, kv[i].value);
	return out->error;
}

int report_stats_flat(struct sbuf *out, const struct npa_stats *s,
		      const struct npa_flavor *fl)
{
	struct stat_kv kv[STAT_KEYS_MAX];
	size_t n = stat_keys_collect(kv, s, fl);

	stat_keys_sort(kv, n);
	return stat_kv_flat(out, kv, n);
}
