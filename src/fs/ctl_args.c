/*
 * ctl_args.c - splitting and checking the words of a ctl write.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_args.h"

bool ctl_name_ok(const char *name)
{
	size_t n = strlen(name);

	return n > 0 && n <= CTL_NAME_MAX &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789_.-") == n;
}

int ctl_split(const char *value, struct ctl_args *a, char *err, size_t errlen)
{
	char *save = NULL;

	snprintf(a->buf, sizeof(a->buf), "%s", value);
	a->n = 0;
	for (char *w = strtok_r(a->buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (a->n == CTL_MAX_WORDS) {
			snprintf(err, errlen, "more than %d words", CTL_MAX_WORDS);
			return -EINVAL;
		}
		a->word[a->n++] = w;
	}
	if (a->n < 2) {
		snprintf(err, errlen, "'%s' is not 'VERB NAME [key=value ...]'", value);
		return -EINVAL;
	}
	if (!ctl_name_ok(a->word[1])) {
		snprintf(err, errlen,
			 "'%s' is not a name: 1 to %d of A-Z a-z 0-9 _ . -", a->word[1],
			 CTL_NAME_MAX);
		return -EINVAL;
	}
	return 0;
}

int ctl_int_option(const char *word, const char *key, int max, int *out,
		   char *err, size_t errlen)
{
	size_t k = strlen(key);
	const char *v = word + k + 1;
	char *end;

	if (strncmp(word, key, k) != 0 || word[k] != '=')
		return 0;
	long n = strtol(v, &end, 10);
	if (v[0] < '0' || v[0] > '9' || *end || n > max) {
		snprintf(err, errlen, "'%s': %s is a number 0..%d", word, key, max);
		return -EINVAL;
	}
	*out = (int)n;
	return 1;
}
