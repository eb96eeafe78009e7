/*
 * ctl_args.h - the words of a ctl write that names things: "VERB NAME
 * [key=value ...]" (ctl/graph, ctl/mempool).
 */
#ifndef NPUMEMFS_CTL_ARGS_H
#define NPUMEMFS_CTL_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "tree.h"

#define CTL_MAX_WORDS 8
#define CTL_NAME_MAX 63 /* a graph's, a mempool's or a pool handle's name */

struct ctl_args {
	char buf[NMFS_WRITE_MAX + 1];
	char *word[CTL_MAX_WORDS];
	int n;
};

/* Split at spaces: at least "VERB NAME", at most CTL_MAX_WORDS words, and
 * NAME 1..CTL_NAME_MAX of [A-Za-z0-9_.-]. 0 or -EINVAL (reason in err). */
int ctl_split(const char *value, struct ctl_args *a, char *err, size_t errlen);
/* Whether `name` is a name a ctl write may give. */
bool ctl_name_ok(const char *name);
/*
 * `word` as "key=N", 0 <= N <= max: 1 with *out set, 0 when word is not
 * about `key`, -EINVAL (reason in err) when N is not such a number.
 */
int ctl_int_option(const char *word, const char *key, int max, int *out,
		   char *err, size_t errlen);

#endif /* NPUMEMFS_CTL_ARGS_H */
