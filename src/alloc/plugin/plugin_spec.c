/*
 * plugin_spec.c - the "PATH ALLOC_FN FREE_FN [HOOK=FN ...]" line.
 *
 * Only syntax is checked here; whether the path may be loaded is
 * plugin_trust.c's question.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "plugin_loader.h"

static const char *const hook_names[PLUGIN_NHOOKS] = {
#define PLUGIN_X(name) #name,
	NPUMEMFS_PLUGIN_HOOKS(PLUGIN_X)
#undef PLUGIN_X
};

const char *plugin_hook_name(enum plugin_hook hook)
{
	return (unsigned)hook < PLUGIN_NHOOKS ? hook_names[hook] : "?";
}

static int hook_by_name(const char *name, size_t len)
{
	for (int i = 0; i < PLUGIN_NHOOKS; i++)
		if (strlen(hook_names[i]) == len && !memcmp(hook_names[i], name, len))
			return i;
	return -1;
}

/* A C identifier: what dlsym can find in a plug-in written in C. */
static bool is_symbol(const char *s, size_t len)
{
	if (len == 0 || len >= PLUGIN_SYMLEN || isdigit((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

static int copy_symbol(char *dst, const char *s, size_t len, const char *what,
		       char *err, size_t errlen)
{
	if (!is_symbol(s, len)) {
		snprintf(err, errlen, "%s '%.*s' is not a C symbol name", what,
			 (int)len, s);
		return -EINVAL;
	}
	memcpy(dst, s, len);
	dst[len] = '\0';
	return 0;
}

static int parse_hook(struct plugin_spec *spec, const char *tok, size_t len,
		      char *err, size_t errlen)
{
	const char *eq = memchr(tok, '=', len);
	if (!eq) {
		snprintf(err, errlen, "unexpected '%.*s': hooks are written HOOK=FN",
			 (int)len, tok);
		return -EINVAL;
	}
	int hook = hook_by_name(tok, (size_t)(eq - tok));
	if (hook < 0) {
		int n = snprintf(err, errlen, "unknown hook '%.*s' (known:",
				 (int)(eq - tok), tok);
		for (int i = 0; i < PLUGIN_NHOOKS && n >= 0 && (size_t)n < errlen; i++)
			n += snprintf(err + n, errlen - (size_t)n, "%s %s",
				      i ? "," : "", hook_names[i]);
		if (n >= 0 && (size_t)n < errlen)
			snprintf(err + n, errlen - (size_t)n, ")");
		return -EINVAL;
	}
	if (spec->hook_name[hook][0]) {
		snprintf(err, errlen, "hook '%s' given twice", hook_names[hook]);
		return -EINVAL;
	}
	return copy_symbol(spec->hook_name[hook], eq + 1,
			   len - (size_t)(eq + 1 - tok), hook_names[hook], err,
			   errlen);
}

/* The next blank-separated token from *pos, its length in *len. */
static const char *next_token(const char **pos, size_t *len)
{
	const char *s = *pos;
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	const char *end = s;
	while (*end && *end != ' ' && *end != '\t' && *end != '\n' && *end != '\r')
		end++;
	*pos = end;
	*len = (size_t)(end - s);
	return *len ? s : NULL;
}

int plugin_spec_parse(const char *line, struct plugin_spec *spec, char *err,
		      size_t errlen)
{
	const char *pos = line;
	size_t len;
	const char *tok;

	memset(spec, 0, sizeof(*spec));
	tok = next_token(&pos, &len);
	if (!tok) {
		snprintf(err, errlen, "empty allocator spec: expected "
			 "'PATH ALLOC_FN FREE_FN [HOOK=FN ...]' or 'caching'");
		return -EINVAL;
	}
	if (tok[0] != '/') {
		snprintf(err, errlen, "plug-in path must be absolute: '%.*s'",
			 (int)len, tok);
		return -EINVAL;
	}
	if (len >= sizeof(spec->path)) {
		snprintf(err, errlen, "plug-in path is too long");
		return -EINVAL;
	}
	memcpy(spec->path, tok, len);

	tok = next_token(&pos, &len);
	if (!tok) {
		snprintf(err, errlen, "missing ALLOC_FN and FREE_FN after the path");
		return -EINVAL;
	}
	int rc = copy_symbol(spec->alloc_name, tok, len, "ALLOC_FN", err, errlen);
	if (rc)
		return rc;
	tok = next_token(&pos, &len);
	if (!tok) {
		snprintf(err, errlen, "missing FREE_FN after '%s'", spec->alloc_name);
		return -EINVAL;
	}
	rc = copy_symbol(spec->free_name, tok, len, "FREE_FN", err, errlen);
	while (!rc && (tok = next_token(&pos, &len)))
		rc = parse_hook(spec, tok, len, err, errlen);
	return rc;
}
