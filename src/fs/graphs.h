/*
 * graphs.h - ctl/graph's state: NPUGraphs by name, the pool handles
 * (torch.npu.graph_pool_handle()) their captures name, and the one thread
 * every graph call runs on (graph_worker.h).
 */
#ifndef NPUMEMFS_GRAPHS_H
#define NPUMEMFS_GRAPHS_H

#include <acl/acl_rt.h>

struct fs_graphs;

/* 0 or -ENOMEM. */
int graphs_new(struct fs_graphs **out);
/* Start the thread graph calls run on: after daemonizing, as threads do
 * not survive the fork. 0, or -errno when it cannot start. */
int graphs_start(struct fs_graphs *gs);
/* Destroy every graph (each gives its pool's use back), stop the worker. */
void graphs_free(struct fs_graphs *gs);
/*
 * The current stream of the graph thread: the stream of the newest capture
 * under way (on `device`, or on any device for -1), as inside
 * `with torch.npu.graph(g, stream=s)`, or NULL (the default stream) when
 * none captures. Pins take it, so a pin made during a capture goes to the
 * graph's host pool, and so do ctl/copy's copies, so a copy into any
 * tensor of the device is captured.
 */
aclrtStream graphs_current_stream(struct fs_graphs *gs, int device);

#endif /* NPUMEMFS_GRAPHS_H */
