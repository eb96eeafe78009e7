/*
 * stats_flat.c - memory_stats(): one "key value" line per stat, sorted by
 * key the way Python sorts the OrderedDict it returns.
 */
#include <inttypes.h>
#include <string.h>

#include "report.h"

#include "stat_keys.h"

int stat_kv_flat(struct sbuf *out, const struct stat_kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sbuf_printf(out, "%s %" PRId64 "\n", kv[i].key, kv[i].value);
	return out->error;
}

/* v in decimal, written backwards to end just before `end`; returns its start. */
static char *decimal(char *end, int64_t v)
{
	uint64_t m = v < 0 ? -(uint64_t)v : (uint64_t)v;
	char *p = end;

	do
		*--p = (char)('0' + m % 10);
	while ((m /= 10) != 0);
	if (v < 0)
		*--p = '-';
	return p;
}

/* One line, as stat_kv_flat prints it, without printf: every cat of
 * stats/deviceN makes some 120 of them. Built from its end: the number,
 * then the key before it. */
static int put_line(struct sbuf *out, const struct stat_key *k, int64_t v)
{
	char line[STAT_KEY_LEN + 24];
	char *end = line + sizeof(line) - 1;
	char *start = decimal(end, v) - 1 - k->len;

	*end = '\n';
	start[k->len] = ' ';
	memcpy(start, k->name, k->len);
	return sbuf_append(out, start, (size_t)(end + 1 - start));
}

int report_stats_flat(struct sbuf *out, const struct npa_stats *s,
		      const struct npa_flavor *fl)
{
	size_t n;
	const struct stat_key *keys = stat_keys_sorted(fl, &n);

	for (size_t i = 0; i < n; i++)
		put_line(out, &keys[i], stat_key_value(s, &keys[i]));
	return out->error;
}
