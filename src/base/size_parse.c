/*
 * size_parse.c - sizes as people write them.
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "size_parse.h"

struct unit {
	const char *name;
	unsigned shift;
};

/*
 * IEC units only. K, M, G, T and KB, MB, GB, TB mean powers of 1000 to
 * some tools and of 1024 to others (and were read as 1024 here before):
 * taking either meaning would silently change somebody's size.
 */
static const struct unit units[] = {
	{ "b", 0 }, { "kib", 10 }, { "mib", 20 }, { "gib", 30 }, { "tib", 40 },
};

static const char ambiguous[][3] = { "k", "m", "g", "t", "kb", "mb", "gb", "tb" };

/* Past the digits and the one blank allowed before a unit; NULL when
 * there are no digits or they overflow. */
static const char *parse_digits(const char *s, uint64_t *v)
{
	const char *p = s;

	*v = 0;
	if (s == NULL || *p < '0' || *p > '9')
		return NULL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (*v > (UINT64_MAX - d) / 10)
			return NULL;
		*v = *v * 10 + d;
	}
	return *p == ' ' && p[1] != '\0' ? p + 1 : p;
}

int npa_parse_size(const char *s, uint64_t *out)
{
	uint64_t v;
	const char *p = parse_digits(s, &v);

	if (p == NULL)
		return -EINVAL;
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

int npa_size_ambiguous(const char *s, char *why, size_t len)
{
	uint64_t v;
	const char *p = parse_digits(s, &v);

	if (p == NULL)
		return 0;
	for (size_t i = 0; i < sizeof(ambiguous) / sizeof(ambiguous[0]); i++) {
		if (strcasecmp(p, ambiguous[i]) != 0)
			continue;
		char u = (char)toupper((unsigned char)*p);
		int power = (int)(strchr("KMGT", u) - "KMGT") + 1;
		snprintf(why, len, "use %llu%ciB (binary) or bytes; npumemfs does not "
			 "guess whether %s means 1000^%d or 1024^%d",
			 (unsigned long long)v, u, p, power, power);
		return 1;
	}
	return 0;
}
