/*
 * private_pool.h - one device's private pools and the scopes that route
 * allocations into them (upstream PrivatePool, graph_pools,
 * graph_pools_freeable, allocation_scopes_). Called with dev->lock held.
 */
#ifndef NPA_PRIVATE_POOL_H
#define NPA_PRIVATE_POOL_H

#include <stdbool.h>
#include <stddef.h>

#include "block.h"
#include "mempool.h"

struct npa_device;

struct npa_private_pool {
	struct npa_pool_id id;
	int use_count;
	long malloc_count;      /* npuMalloc_count: device mallocs not yet freed */
	/* Expandable pages were mapped for it: upstream counts those per map
	 * call and per unmap call, so the count no longer matches segments. */
	bool mapped_pages;
	bool freeable;          /* in graph_pools_freeable: use_count reached 0 */
	bool use_on_oom;
	bool no_split;
	bool has_source;        /* segments come from `source`, not the device */
	struct npa_segment_source source;
	struct npa_pool small;
	struct npa_pool large;
	struct npa_private_pool *next; /* creation order */
};

/* One entry of allocation_scopes_. A scope holds a use of its pool, so
 * the pool cannot be deleted under it. */
struct npa_scope {
	struct npa_pool_id id;
	npa_pool_filter filter;
	void *arg;
	struct npa_private_pool *pool;
};

struct npa_private_pools {
	struct npa_private_pool *head;
	struct npa_scope *scopes;   /* oldest first; searched newest first */
	size_t nscopes;
	size_t cap;
};

struct npa_private_pool *npa_private_pool_find(struct npa_private_pools *pp,
					       struct npa_pool_id id);
int npa_private_pool_incref(struct npa_private_pools *pp, struct npa_pool_id id);
int npa_private_pool_begin(struct npa_private_pools *pp, struct npa_pool_id id,
			   npa_pool_filter filter, void *arg);
int npa_private_pool_end(struct npa_private_pools *pp, struct npa_pool_id id);
int npa_private_pool_release(struct npa_private_pools *pp, struct npa_pool_id id);
/* The pool the newest accepting scope routes `stream` to, or NULL. Inline:
 * every allocation in a scope asks. */
static inline struct npa_private_pool *npa_private_pool_route(const struct npa_private_pools *pp,
							      aclrtStream stream)
{
	for (size_t i = pp->nscopes; i-- > 0;) {
		const struct npa_scope *s = &pp->scopes[i];

		if (s->filter(stream, s->arg))
			return s->pool;
	}
	return NULL;
}
/* Whether a scope routes to `p` (released too often, it is still in use). */
bool npa_private_pool_routed(const struct npa_private_pools *pp,
			     const struct npa_private_pool *p);
/* Unlink and free a pool that holds no segment and no spare page any more;
 * its source, if any, is dropped. */
void npa_private_pool_delete(struct npa_private_pools *pp, struct npa_private_pool *p);
/* Free every pool; sources are not dropped (their owner is going too). */
void npa_private_pools_fini(struct npa_private_pools *pp);

#endif /* NPA_PRIVATE_POOL_H */
