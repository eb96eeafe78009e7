/*
 * host_pools.c - the host allocator's private pools (ATen HostPrivatePool,
 * begin_allocate_to_pool, end_allocate_to_pool, release_pool), as graph
 * capture uses them since torch_npu's "[ACLGRAPH] support pin memory".
 *
 * Unlike the device allocator, scopes are searched in insertion order.
 * The texts are the ones ATen shares with the device allocator.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "host_impl.h"

static void init_free_lists(struct host_pool *p)
{
	for (size_t i = 0; i < NPA_HOST_BUCKETS; i++)
		TAILQ_INIT(&p->free[i]);
}

static struct private_pool *pool_create(void)
{
	struct host_pool *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	init_free_lists(p);
	return &p->base;
}

static void pool_destroy(struct private_pool *p)
{
	free(host_pool_of(p));
}

/* ATen's create_or_incref_pool takes a freeable pool back, and its
 * get_pool walks captures_underway_ from the front. */
static const struct pool_registry_ops host_pools = {
	.create = pool_create,
	.destroy = pool_destroy,
	.revives_freeable = true,
};

void host_pools_init(struct npa_host *h)
{
	h->dflt.base.use_count = 1;
	init_free_lists(&h->dflt);
	pool_registry_init(&h->pools, &host_pools);
}

struct host_pool *host_pool_route(struct npa_host *h, aclrtStream stream)
{
	struct host_pool *p = host_pool_of(pool_registry_route(&h->pools, stream));

	return p != NULL ? p : &h->dflt;
}

void host_pool_delete(struct npa_host *h, struct host_pool *p)
{
	pool_registry_delete(&h->pools, &p->base);
}

static int refuse(char *err, size_t errlen, int rc, const char *msg)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", msg);
	return rc;
}

/* The pool is made or increfed first: a refused call has taken a use. */
int npa_host_begin_allocate_to_pool(struct npa_host *h, struct npa_pool_id id,
				    npa_pool_filter filter, void *arg, char *err,
				    size_t errlen)
{
	int rc;

	if (!h->ops->pools)
		return refuse(err, errlen, -EINVAL, "Not implemented for begin_allocate_to_pool");
	npa_lock_acquire(&h->lock);
	rc = pool_registry_begin(&h->pools, id, filter, arg);
	npa_lock_release(&h->lock);
	if (rc == -EBUSY)
		refuse(err, errlen, rc, "beginAllocateToPool: already recording to mempool_id");
	return rc;
}

int npa_host_end_allocate_to_pool(struct npa_host *h, struct npa_pool_id id, char *err,
				  size_t errlen)
{
	int rc;

	if (!h->ops->pools)
		return refuse(err, errlen, -EINVAL, "Not implemented for end_allocate_to_pool");
	npa_lock_acquire(&h->lock);
	rc = pool_registry_end(&h->pools, id);
	npa_lock_release(&h->lock);
	if (rc)
		refuse(err, errlen, rc, "endAllocatePool: not currently recording to mempool_id");
	return rc;
}

/* At no use left the pool is freeable: host_empty_cache frees its free
 * blocks and deletes it once it owns none. */
int npa_host_release_pool(struct npa_host *h, struct npa_pool_id id, char *err,
			  size_t errlen)
{
	int rc;

	if (!h->ops->pools)
		return refuse(err, errlen, -EINVAL, "Not implemented for release_pool");
	npa_lock_acquire(&h->lock);
	rc = pool_registry_release(&h->pools, id);
	npa_lock_release(&h->lock);
	if (rc)
		refuse(err, errlen, rc, "release_pool: no such pool (graph_pools_.at)");
	return rc;
}

bool host_pool_routed(const struct npa_host *h, const struct host_pool *p)
{
	return pool_registry_routed(&h->pools, &p->base);
}

static uint64_t free_bytes(const struct host_pool *p)
{
	uint64_t n = 0;
	const struct host_block *b;

	for (size_t i = 0; i < NPA_HOST_BUCKETS; i++)
		TAILQ_FOREACH(b, &p->free[i], free_link)
			n += b->size;
	return n;
}

int npa_host_pools(struct npa_host *h, struct npa_host_pool_info **out, size_t *n)
{
	struct host_block *b, *tmp;
	size_t count = 0, i = 0;
	struct host_pool *p;

	npa_lock_acquire(&h->lock);
	for (p = host_pool_first(h); p != NULL; p = host_pool_next(p))
		count++;
	*out = count ? calloc(count, sizeof(**out)) : NULL;
	for (p = host_pool_first(h); *out != NULL && p != NULL; p = host_pool_next(p), i++)
		(*out)[i] = (struct npa_host_pool_info){
			.id = p->base.id, .use_count = p->base.use_count,
			.freeable = p->base.freeable, .routing = host_pool_routed(h, p),
			.blocks = p->nblocks, .free_bytes = free_bytes(p),
		};
	HASH_ITER(hh, h->blocks, b, tmp)
		for (i = 0; *out != NULL && b->pool != &h->dflt && i < count; i++)
			if (npa_pool_id_eq((*out)[i].id, b->pool->base.id))
				(*out)[i].bytes += b->size;
	npa_lock_release(&h->lock);
	*n = *out != NULL ? count : 0;
	return count == 0 || *out != NULL ? 0 : -ENOMEM;
}

void host_pools_fini(struct npa_host *h)
{
	pool_registry_fini(&h->pools);
}
