/*
 * fuzz_alloc_conf.c - npa_conf_parse over arbitrary strings, both flavors.
 *
 * A refused string must leave the settings byte for byte as they were. An
 * accepted one must survive the round trip alloc_conf.h promises: its
 * npa_conf_format lines joined as "key:value,..." parse over the defaults
 * to the same settings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/conf/alloc_conf.h"

#define FORMAT_LEN 4096

/* "key value origin" lines to "key:value,...", leaving out "-" and "#". */
static void join_formatted(char *text, char *out, size_t outlen)
{
	size_t len = 0;
	char *save = NULL;

	out[0] = '\0';
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char key[128], value[256];
		if (l[0] == '#')
			continue;
		if (sscanf(l, "%127s %255s", key, value) != 2)
			abort();
		if (strcmp(value, "-") == 0)
			continue;
		int n = snprintf(out + len, outlen - len, "%s%s:%s", len ? "," : "",
				 key, value);
		if (n < 0 || (size_t)n >= outlen - len)
			abort();
		len += (size_t)n;
	}
}

static void check_round_trip(const struct npa_conf *conf,
			     const struct npa_flavor *flavor)
{
	static char text[FORMAT_LEN], joined[FORMAT_LEN], err[NPA_CONF_ERRLEN];
	struct npa_conf again;

	if (npa_conf_format(conf, flavor, text, sizeof(text)) < 0)
		abort();
	join_formatted(text, joined, sizeof(joined));
	npa_conf_default(&again, flavor);
	if (npa_conf_parse(&again, flavor, joined, NPA_ORIGIN_WRITE, err,
			   sizeof(err)) != 0)
		abort();
	if (npa_conf_diff(conf, &again, NULL, 0) != 0)
		abort();
}

static void run(const char *s, const struct npa_flavor *flavor)
{
	static char err[NPA_CONF_ERRLEN];
	struct npa_conf conf, before;

	npa_conf_default(&conf, flavor);
	memcpy(&before, &conf, sizeof(conf));
	err[0] = '\0';
	if (npa_conf_parse(&conf, flavor, s, NPA_ORIGIN_WRITE, err, sizeof(err)) == 0)
		check_round_trip(&conf, flavor);
	else if (memcmp(&conf, &before, sizeof(conf)) != 0 || err[0] == '\0')
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	run(s, &npa_flavor_npu);
	run(s, &npa_flavor_cuda);
	free(s);
	return 0;
}
