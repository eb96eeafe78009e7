/*
 * size_parse.c - sizes as people write them.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <strings.h>

#include "size_parse.h"

struct unit {
	const char *name;
	unsigned shift;
};

/* Everything is binary: memory sizes in this field always are. */
static const struct unit units[] = {
	{ "", 0 },    { "b", 0 },   { "k", 10 },  { "kb", 10 }, { "kib", 10 },
	{ "m", 20 },  { "mb", 20 }, { "mib", 20 }, { "g", 30 },  { "gb", 30 },
	{ "gib", 30 }, { "t", 40 },  { "tb", 40 }, { "tib", 40 },
};

int npa_parse_size(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	const char *p = s;

	if (s == NULL || *p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	/* Plain bytes, what traces are made of: no unit to look for. */
	if (*p == '\0') {
		*out = v;
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcasecmp(p, units[i].name) != 0)
			continue;
		if (units[i].shift && v > (UINT64_MAX >> units[i].shift))
			return -EINVAL;
		*out = v << units[i].shift;
		return 0;
	}
	return -EINVAL;
}
