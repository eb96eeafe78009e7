/*
 * fuzz_plugin_spec.c - plugin_spec_parse over arbitrary lines.
 *
 * A spec that parses names an absolute path and C identifiers only, every
 * field NUL-terminated inside its array.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/plugin/plugin_loader.h"

static void check_symbol(const char *s, size_t cap, bool optional)
{
	size_t len = strnlen(s, cap);

	if (len == cap)
		abort();
	if (len == 0) {
		if (!optional)
			abort();
		return;
	}
	if (isdigit((unsigned char)s[0]))
		abort();
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			abort();
}

static void check_accepted(const struct plugin_spec *spec)
{
	size_t len = strnlen(spec->path, sizeof(spec->path));

	if (len == sizeof(spec->path) || spec->path[0] != '/')
		abort();
	if (strpbrk(spec->path, " \t\r\n"))
		abort();
	check_symbol(spec->alloc_name, sizeof(spec->alloc_name), false);
	check_symbol(spec->free_name, sizeof(spec->free_name), false);
	for (int h = 0; h < PLUGIN_NHOOKS; h++)
		check_symbol(spec->hook_name[h], sizeof(spec->hook_name[h]), true);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct plugin_spec spec;
	char err[PLUGIN_ERRLEN];
	char *line = malloc(size + 1);

	if (line == NULL)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	err[0] = '\0';
	if (plugin_spec_parse(line, &spec, err, sizeof(err)) == 0)
		check_accepted(&spec);
	else if (err[0] == '\0' || strnlen(err, sizeof(err)) == sizeof(err))
		abort(); /* a refusal always says why */
	free(line);
	return 0;
}
