/*
 * replay_ops.h - where a replay's launch_op operators go.
 *
 * An operator's workspace comes from the ACL allocator registered on its
 * stream (aclrtAllocatorRegister) or, with none, from the replay's target
 * (the allocator in use), as ctl/op's do; it is freed once the operator's
 * work has completed, seen at the next launch or sync line.
 */
#ifndef NPUMEMFS_REPLAY_OPS_H
#define NPUMEMFS_REPLAY_OPS_H

#include "op_launch.h"
#include "replay.h"

/*
 * Launch the replay's operators through `l` (a daemon's own, so that its
 * counts include them), which must outlive the replay. Without one a
 * replay makes its own at its first launch_op, over its target.
 */
void wl_replay_set_launcher(struct wl_replay *r, struct op_launcher *l);
/* The launcher in use: NULL before the first launch_op of a replay
 * that has none set. */
struct op_launcher *wl_replay_launcher(const struct wl_replay *r);

/*
 * The runtime's stream that the trace's stream `number` names on `device`
 * (made at its first use), so that an ACL allocator can be registered on
 * it; NULL for stream 0, a stream not made yet, or one the trace never
 * names.
 */
aclrtStream wl_replay_runtime_stream(const struct wl_replay *r, int device, long number);

#endif /* NPUMEMFS_REPLAY_OPS_H */
