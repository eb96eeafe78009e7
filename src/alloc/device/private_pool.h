/*
 * private_pool.h - one device's private pools (upstream PrivatePool) and
 * what they hold; pool_registry.h keeps them by id with the scopes that
 * route allocations into them (graph_pools, graph_pools_freeable,
 * allocation_scopes_). Called with dev->lock held.
 */
#ifndef NPA_PRIVATE_POOL_H
#define NPA_PRIVATE_POOL_H

#include <stdbool.h>
#include <stddef.h>

#include "alloc/blocks/block.h"
#include "mempool.h"
#include "alloc/pools/pool_registry.h"

struct npa_device;

struct npa_private_pool {
	struct private_pool base;  /* id, use_count, freeable, creation order */
	long malloc_count;      /* npuMalloc_count: device mallocs not yet freed */
	/* Expandable pages were mapped for it: upstream counts those per map
	 * call and per unmap call, so the count no longer matches segments. */
	bool mapped_pages;
	bool use_on_oom;
	bool no_split;
	bool has_source;        /* segments come from `source`, not the device */
	struct npa_segment_source source;
	struct npa_pool small;
	struct npa_pool large;
};

/* The device pool a registry entry is, or NULL for none. */
static inline struct npa_private_pool *npa_private_pool_of(const struct private_pool *p)
{
	return p != NULL ? (struct npa_private_pool *)((char *)p -
						       offsetof(struct npa_private_pool, base))
			 : NULL;
}

/* Creation order, for walking every pool. */
static inline struct npa_private_pool *npa_private_pool_first(const struct pool_registry *pp)
{
	return npa_private_pool_of(pp->head);
}

static inline struct npa_private_pool *npa_private_pool_next(const struct npa_private_pool *p)
{
	return npa_private_pool_of(p->base.next);
}

/* Scopes are searched newest first; a freeable pool is not taken again. */
void npa_private_pools_init(struct pool_registry *pp);
struct npa_private_pool *npa_private_pool_find(const struct pool_registry *pp,
					       struct npa_pool_id id);
/* Room first, so that only upstream's own refusal (already recording,
 * after the incref) leaves a trace; -EBUSY for that one. */
int npa_private_pool_begin(struct pool_registry *pp, struct npa_pool_id id,
			   npa_pool_filter filter, void *arg);
/* The pool the newest accepting scope routes `stream` to, or NULL. Inline:
 * every allocation in a scope asks. */
static inline struct npa_private_pool *npa_private_pool_route(const struct pool_registry *pp,
							      aclrtStream stream)
{
	return npa_private_pool_of(pool_registry_route(pp, stream));
}
/* Unlink and free a pool that holds no segment and no spare page any more;
 * its source, if any, is dropped. */
void npa_private_pool_delete(struct pool_registry *pp, struct npa_private_pool *p);

#endif /* NPA_PRIVATE_POOL_H */
