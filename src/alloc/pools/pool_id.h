/*
 * pool_id.h - the name of a private pool, and which streams it takes.
 */
#ifndef NPUMEMFS_POOL_ID_H
#define NPUMEMFS_POOL_ID_H

#include <stdbool.h>
#include <stdint.h>

#include <acl/acl_rt.h>

/* upstream MempoolId_t; (0, 0) is the default pool. */
struct npa_pool_id {
	uint64_t first;
	uint64_t second;
};

static inline bool npa_pool_id_is_default(struct npa_pool_id id)
{
	return id.first == 0 && id.second == 0;
}

static inline bool npa_pool_id_eq(struct npa_pool_id a, struct npa_pool_id b)
{
	return a.first == b.first && a.second == b.second;
}

/* Whether an allocation on `stream` goes to the scope's pool. */
typedef bool (*npa_pool_filter)(aclrtStream stream, void *arg);

/* use_mem_pool's filter (_npu_beginAllocateCurrentStreamToPool): the
 * one stream `arg`. A scope with it is answered without the call. */
bool npa_pool_filter_stream(aclrtStream stream, void *arg);

#endif /* NPUMEMFS_POOL_ID_H */
