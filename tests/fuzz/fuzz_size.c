/*
 * fuzz_size.c - npa_parse_size over arbitrary text.
 *
 * A size that parses must be what its digits times its unit say, computed
 * here the slow way in 128 bits, with an IEC unit or none; a refused one
 * must leave *out alone, and one refused for an ambiguous unit must say
 * what to write instead.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/size_parse.h"

static unsigned unit_shift(const char *u)
{
	static const struct { const char *name; unsigned shift; } units[] = {
		{ "", 0 }, { "b", 0 }, { "kib", 10 }, { "mib", 20 }, { "gib", 30 },
		{ "tib", 40 },
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
	if (*p == ' ' && *++p == '\0')
		abort(); /* a blank with no unit after it */
	v <<= unit_shift(p);
	if (v > UINT64_MAX || (uint64_t)v != got)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), why[160];
	uint64_t out = 0x5a5a5a5a5a5a5a5aull;

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	int ambiguous = npa_size_ambiguous(s, why, sizeof(why));
	if (npa_parse_size(s, &out) == 0) {
		check_accepted(s, out);
		if (ambiguous)
			abort();
	} else if (out != 0x5a5a5a5a5a5a5a5aull ||
		   (ambiguous && strncmp(why, "use ", 4) != 0)) {
		abort();
	}
	free(s);
	return 0;
}
