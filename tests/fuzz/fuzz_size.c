/*
 * fuzz_size.c - npa_parse_size over arbitrary text.
 *
 * A size that parses must be what its digits times its unit say, computed
 * here the slow way in 128 bits; a refused one must leave *out alone.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/size_parse.h"

static unsigned unit_shift(const char *u)
{
	static const struct { const char *name; unsigned shift; } units[] = {
		{ "", 0 }, { "b", 0 }, { "k", 10 }, { "kb", 10 }, { "kib", 10 },
		{ "m", 20 }, { "mb", 20 }, { "mib", 20 }, { "g", 30 }, { "gb", 30 },
		{ "gib", 30 }, { "t", 40 }, { "tb", 40 }, { "tib", 40 },
	};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcasecmp(u, units[i].name) == 0)
			return units[i].shift;
	abort(); /* accepted with a unit the header does not list */
}

static void check_accepted(const char *s, uint64_t got)
{
	unsigned __int128 v = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (unsigned)(*p - '0');
		if (v > UINT64_MAX)
			abort();
	}
	if (p == s)
		abort();
	v <<= unit_shift(p);
	if (v > UINT64_MAX || (uint64_t)v != got)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	uint64_t out = 0x5a5a5a5a5a5a5a5aull;

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (npa_parse_size(s, &out) == 0)
		check_accepted(s, out);
	else if (out != 0x5a5a5a5a5a5a5a5aull)
		abort();
	free(s);
	return 0;
}
