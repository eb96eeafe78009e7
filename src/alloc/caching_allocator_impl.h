/*
 * caching_allocator_impl.h - the allocator object behind struct npa.
 */
#ifndef NPA_CACHING_ALLOCATOR_IMPL_H
#define NPA_CACHING_ALLOCATOR_IMPL_H

#include <stdio.h>

#include "device.h"

struct npa {
	const struct npa_flavor *flavor;
	struct npa_conf conf;       /* read by devices under their lock */
	/* graph_pool_handle's counters: uid_ for users' pools, uuid_ for
	 * captures without one; both count from 1. */
	uint64_t next_user_pool;
	uint64_t next_graph_pool;
	struct npa_host *host;      /* the pinned host allocator */
	struct npa_frame_names names; /* what the devices' recorded frames point to */
	int ndev;
	struct npa_device dev[];
};

/* A refusal's reason, for callers that passed room for one. */
static inline void npa_set_err(char *err, size_t errlen, const char *msg)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", msg);
}

#endif /* NPA_CACHING_ALLOCATOR_IMPL_H */
