/*
 * streams.h - the streams the daemon takes on each device, and a tensor
 * store on each (tensors/deviceN/ on the default stream,
 * tensors/deviceN/streamS/ on the S-th stream).
 *
 * Stream 0 is the device's default stream, a real handle as torch_npu's
 * is. Stream S of a device is made with aclrtCreateStream, with its store, the
 * first time it is named (a tensor created in its folder, ctl/graph or
 * ctl/mempool), as a fresh process takes streams from its pool, and
 * destroyed at shutdown.
 * Thread-safe.
 */
#ifndef NPUMEMFS_STREAMS_H
#define NPUMEMFS_STREAMS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <acl/acl_rt.h>

#include "alloc/switch/allocator_switch.h"
#include "workload/tensor_store.h"

#include "daemon_log.h"
#include "tree.h"

struct fs_streams {
	pthread_mutex_t lock;
	struct sw *sw;
	int device_count;
	/* [device][0] is the default stream (the simulator's handle for it, never
	 * destroyed here) and its store. */
	aclrtStream stream[NPA_MAX_DEVICES][TREE_STREAMS + 1];
	struct tensor_store *tensors[NPA_MAX_DEVICES][TREE_STREAMS + 1];
};

/* The default stream's stores of every device; -ENOMEM. */
int streams_init(struct fs_streams *s, struct sw *sw, int device_count);
/* Free every tensor (logged per store), then destroy the streams. */
void streams_fini(struct fs_streams *s, struct dlog *log);

/*
 * Stream `index` (0 default, 1..TREE_STREAMS) of `device`, made with its
 * store if it is not yet. 0, -ENODEV or -EINVAL for a device or index out
 * of range, -EIO when the runtime refuses, -ENOMEM (reason in err).
 */
int streams_get(struct fs_streams *s, int device, int index, aclrtStream *out,
		char *err, size_t errlen);
/* The store of stream `index`: NULL while that stream has not been made,
 * unless `make` (then NULL only when it cannot be made). */
struct tensor_store *streams_store(struct fs_streams *s, int device, int index,
				   bool make);

#endif /* NPUMEMFS_STREAMS_H */
