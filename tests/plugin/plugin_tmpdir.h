/*
 * plugin_tmpdir.h - a private folder with a copy of a plug-in in it.
 *
 * Tests change modes and owners freely on their own copy, under a fresh
 * folder in /tmp (sticky, so an allowed parent).
 */
#ifndef NPUMEMFS_TESTS_PLUGIN_TMPDIR_H
#define NPUMEMFS_TESTS_PLUGIN_TMPDIR_H

#include <limits.h>

struct plugin_tmpdir {
	char dir[1024];
	char so[PATH_MAX]; /* dir/NAME, a 0755 copy of the source object */
};

/* Create the folder and copy `source` into it as `name`. 0 or -errno. */
int plugin_tmpdir_make(struct plugin_tmpdir *t, const char *source,
		       const char *name);
/* dir/NAME into `out`. */
void plugin_tmpdir_path(const struct plugin_tmpdir *t, const char *name,
			char *out);
/* Remove the folder and everything in it. */
void plugin_tmpdir_remove(struct plugin_tmpdir *t);

#endif
