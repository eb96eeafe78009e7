/*
 * stream_id.h - the number reports give a stream (snapshots, history):
 * the runtime's own stream id, as torch_npu reads it.
 */
#ifndef NPUMEMFS_STREAM_ID_H
#define NPUMEMFS_STREAM_ID_H

#include <stdint.h>

#include <acl/acl_rt.h>

/* 0 for a default stream, 1, 2, ... in creation order; UINT64_MAX unknown. */
static inline uint64_t npa_stream_id(aclrtStream stream)
{
	int32_t id;

	if (aclrtStreamGetId(stream, &id) != ACL_SUCCESS)
		return UINT64_MAX;
	return (uint64_t)id;
}

#endif /* NPUMEMFS_STREAM_ID_H */
