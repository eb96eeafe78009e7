/*
 * private_pool.c - a device's private pools as the registry makes and
 * frees them. Memory is released by device_memory.c.
 */
#include <stdlib.h>

#include "private_pool.h"

static struct private_pool *pool_create(void)
{
	struct npa_private_pool *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	npa_pool_init(&p->small, true);
	npa_pool_init(&p->large, false);
	p->small.owner = p;
	p->large.owner = p;
	return &p->base;
}

/* The caller has given the physical pages back (npa_handle_cache_drain). */
static void pool_destroy(struct private_pool *base)
{
	struct npa_private_pool *p = npa_private_pool_of(base);

	free(p->small.spare.h);
	free(p->large.spare.h);
	npa_pool_fini(&p->small);
	npa_pool_fini(&p->large);
	free(p);
}

/* A freeable pool is not taken again (upstream asserts use_count > 0),
 * and the newest scope is asked first. */
static const struct pool_registry_ops device_pools = {
	.create = pool_create,
	.destroy = pool_destroy,
	.newest_first = true,
};

void npa_private_pools_init(struct pool_registry *pp)
{
	pool_registry_init(pp, &device_pools);
}

struct npa_private_pool *npa_private_pool_find(const struct pool_registry *pp,
					       struct npa_pool_id id)
{
	return npa_private_pool_of(pool_registry_find(pp, id));
}

int npa_private_pool_begin(struct pool_registry *pp, struct npa_pool_id id,
			   npa_pool_filter filter, void *arg)
{
	int rc = pool_registry_reserve(pp);

	return rc ? rc : pool_registry_begin(pp, id, filter, arg);
}

void npa_private_pool_delete(struct pool_registry *pp, struct npa_private_pool *p)
{
	struct npa_segment_source source = p->source;
	bool has_source = p->has_source;

	pool_registry_delete(pp, &p->base);
	if (has_source && source.drop != NULL)
		source.drop(source.ctx);
}
