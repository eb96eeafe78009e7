/*
 * fuse_ops.h - the FUSE operations over the tree and the tensor stores.
 */
#ifndef NPUMEMFS_FUSE_OPS_H
#define NPUMEMFS_FUSE_OPS_H

#define FUSE_USE_VERSION 312
#include <fuse.h>

extern const struct fuse_operations nmfs_ops;

struct nmfs;
/* Free the handles of files still open when the loop ended. */
void fs_release_open_files(struct nmfs *d);

#endif /* NPUMEMFS_FUSE_OPS_H */
