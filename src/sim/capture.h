/*
 * capture.h - what a capture under way changes for streams, events and
 * copies (internal).
 */
#ifndef NPUSIM_CAPTURE_H
#define NPUSIM_CAPTURE_H

#include "model.h"

/* Under sched_lock: record `t` into the capture of s, which captures.
 * ACL_SUCCESS, or the error the enqueueing call returns. */
aclError capture_record(struct sim_stream *s, const struct sim_task *t);
/* Under sched_lock: whether a stream of `device` captures. */
bool capture_on_device(int device);
/*
 * For a call that a capture mode can forbid (aclrtMemcpy, event queries
 * and synchronizes): ACL_SUCCESS if the captures under way allow it on
 * the calling thread, else ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, with the
 * forbidding captures invalidated if `invalidating_call` (the call's name,
 * kept as the reason) is not NULL. Lock-free while no stream captures.
 */
aclError capture_unsafe_call(const char *invalidating_call);

#endif /* NPUSIM_CAPTURE_H */
