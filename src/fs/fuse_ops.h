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
/*
 * Tell each poll that waits on a file (file_ops.ready said no) once a
 * read would return: nothing wakes a poller otherwise, as the allocator
 * wakes no one. `d` is the struct nmfs; called now and then.
 */
void fs_notify_polls(void *d);

#endif /* NPUMEMFS_FUSE_OPS_H */
