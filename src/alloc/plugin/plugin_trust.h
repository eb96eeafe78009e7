/*
 * plugin_trust.h - may this path be loaded as a plug-in?
 *
 * The decision is made on an open descriptor, and that descriptor is what
 * the loader hands to dlopen, so the file checked is the file loaded.
 */
#ifndef NPUMEMFS_PLUGIN_TRUST_H
#define NPUMEMFS_PLUGIN_TRUST_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Open `path` for loading: canonicalize it into `canon` (PATH_MAX bytes),
 * require it under one of `allowed_dirs` (comma-separated), open it with
 * O_NOFOLLOW and check the open file and every folder above it. Returns
 * the descriptor, or -ENOENT / -EACCES / -errno with the reason in err.
 */
int plugin_trust_open(const char *path, const char *allowed_dirs, uid_t owner,
		      char *canon, char *err, size_t errlen);

#endif /* NPUMEMFS_PLUGIN_TRUST_H */
