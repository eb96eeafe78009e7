/*
 * pool_registry.h - private pools by id and the scopes that route
 * allocations into them (upstream graph_pools and captures_underway), as
 * the device allocator and the pinned host allocator both keep them.
 *
 * The registry knows a pool only by the header its owner embeds: what the
 * pool holds stays with the allocator that made it. The caller holds the
 * lock that guards the pools.
 */
#ifndef NPA_POOL_REGISTRY_H
#define NPA_POOL_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "pool_id.h"

struct private_pool {
	struct npa_pool_id id;
	int use_count;
	bool freeable;              /* use_count reached 0 */
	struct private_pool *next;  /* creation order */
};

/* One scope of begin_allocate_to_pool. A scope holds a use of its pool,
 * so the pool cannot be deleted under it. */
struct pool_scope {
	struct npa_pool_id id;
	npa_pool_filter filter;
	void *arg;
	struct private_pool *pool;
};

/* Where the device and the host allocators part: what a pool is, and the
 * two rules their upstreams differ on. */
struct pool_registry_ops {
	/* A zeroed pool of the owner's kind, or NULL without memory. */
	struct private_pool *(*create)(void);
	/* Free what create made; the pool is unlinked already. */
	void (*destroy)(struct private_pool *p);
	/* A freeable pool taken again comes back rather than being refused. */
	bool revives_freeable;
	/* route asks the newest scope first rather than the oldest. */
	bool newest_first;
};

struct pool_registry {
	const struct pool_registry_ops *ops;
	bool newest_first;          /* ops->newest_first, at hand for route */
	struct private_pool *head;
	struct pool_scope *scopes;  /* oldest first */
	size_t nscopes, cap;
};

void pool_registry_init(struct pool_registry *reg, const struct pool_registry_ops *ops);
struct private_pool *pool_registry_find(const struct pool_registry *reg, struct npa_pool_id id);
/* create_or_incref_pool: a new pool with use_count 1, or one more use;
 * -EINVAL for a freeable pool unless the registry revives those. */
int pool_registry_incref(struct pool_registry *reg, struct npa_pool_id id);
/* Room for one more scope, so that a begin after it cannot run out. */
int pool_registry_reserve(struct pool_registry *reg);
/* Take a use of `id`, then route to it: -EBUSY (the use taken) if a scope
 * routes to it already. */
int pool_registry_begin(struct pool_registry *reg, struct npa_pool_id id,
			npa_pool_filter filter, void *arg);
/* Drop the oldest scope for `id`; -ENOENT without one. */
int pool_registry_end(struct pool_registry *reg, struct npa_pool_id id);
/* Give a use back; at none left the pool is freeable. -ENOENT for an
 * unknown pool or one with no use to give. */
int pool_registry_release(struct pool_registry *reg, struct npa_pool_id id);
/* Whether a scope routes to `p` (released too often, it is still in use). */
bool pool_registry_routed(const struct pool_registry *reg, const struct private_pool *p);
/* Unlink `p` and destroy it. */
void pool_registry_delete(struct pool_registry *reg, struct private_pool *p);
/* Destroy every pool and forget every scope. */
void pool_registry_fini(struct pool_registry *reg);

static inline bool pool_scope_takes(const struct pool_scope *s, aclrtStream stream)
{
	return s->filter == npa_pool_filter_stream ? stream == s->arg : s->filter(stream, s->arg);
}

/* The pool the first accepting scope routes `stream` to, or NULL. Inline:
 * every allocation in a scope asks. */
static inline struct private_pool *pool_registry_route(const struct pool_registry *reg,
						       aclrtStream stream)
{
	const struct pool_scope *s = reg->scopes, *end = s + reg->nscopes;

	if (reg->newest_first) {
		for (const struct pool_scope *k = end; k != s; k--)
			if (pool_scope_takes(&k[-1], stream))
				return k[-1].pool;
		return NULL;
	}
	for (; s != end; s++)
		if (pool_scope_takes(s, stream))
			return s->pool;
	return NULL;
}

/*
 * route's answer when one scope routes and its filter is a stream's
 * (use_mem_pool's): true with the pool (NULL: none) in *out, else false.
 * No loop and no call, so a fast path may use it without saving
 * registers for either.
 */
static inline bool pool_registry_route_one(const struct pool_registry *reg, aclrtStream stream,
					   struct private_pool **out)
{
	const struct pool_scope *s = reg->scopes;

	if (reg->nscopes != 1 || s->filter != npa_pool_filter_stream)
		return false;
	*out = stream == s->arg ? s->pool : NULL;
	return true;
}

#endif /* NPA_POOL_REGISTRY_H */
