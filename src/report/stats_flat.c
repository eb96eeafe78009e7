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

/* v in decimal at the end of buf[0..24); returns where it starts. */
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
 * stats/deviceN makes some 120 of them. */
static int put_line(struct sbuf *out, const struct stat_key *k, int64_t v)
{
	char line[STAT_KEY_LEN + 24];
	char digits[24], *d = decimal(digits + sizeof(digits), v);
	size_t nd = (size_t)(digits + sizeof(digits) - d);

	memcpy(line, k->name, k->len);
	line[k->len] = ' ';
	memcpy(line + k->len + 1, d, nd);
	line[k->len + 1 + nd] = '\n';
	return sbuf_append(out, line, k->len + nd + 2);
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
