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

void host_pool_init(struct host_pool *p, struct npa_pool_id id)
{
	p->id = id;
	p->use_count = 1;
	for (size_t i = 0; i < NPA_HOST_BUCKETS; i++)
		TAILQ_INIT(&p->free[i]);
}

struct host_pool *host_pool_find(struct npa_host *h, struct npa_pool_id id)
{
	for (struct host_pool *p = h->pools; p != NULL; p = p->next)
		if (npa_pool_id_eq(p->id, id))
			return p;
	return NULL;
}

struct host_pool *host_pool_route(struct npa_host *h, aclrtStream stream)
{
	for (size_t i = 0; i < h->nscopes; i++)
		if (h->scopes[i].filter(stream, h->scopes[i].arg))
			return h->scopes[i].pool;
	return &h->dflt;
}

static struct host_pool *create_or_incref(struct npa_host *h, struct npa_pool_id id)
{
	struct host_pool *p = host_pool_find(h, id), **tail;

	if (p != NULL) {
		p->use_count++;
		p->freeable = false;
		return p;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	host_pool_init(p, id);
	for (tail = &h->pools; *tail != NULL; tail = &(*tail)->next)
		;
	*tail = p;
	return p;
}

void host_pool_delete(struct npa_host *h, struct host_pool *p)
{
	for (struct host_pool **at = &h->pools; *at != NULL; at = &(*at)->next) {
		if (*at == p) {
			*at = p->next;
			free(p);
			return;
		}
	}
}

static int refuse(char *err, size_t errlen, int rc, const char *msg)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", msg);
	return rc;
}

static int push_scope(struct npa_host *h, const struct host_scope *sc)
{
	if (h->nscopes == h->scope_cap) {
		size_t cap = h->scope_cap ? 2 * h->scope_cap : 4;
		struct host_scope *grown = realloc(h->scopes, cap * sizeof(*grown));

		if (grown == NULL)
			return -ENOMEM;
		h->scopes = grown;
		h->scope_cap = cap;
	}
	h->scopes[h->nscopes++] = *sc;
	return 0;
}

/* The pool is made or increfed first: a refused call has taken a use. */
int npa_host_begin_allocate_to_pool(struct npa_host *h, struct npa_pool_id id,
				    npa_pool_filter filter, void *arg, char *err,
				    size_t errlen)
{
	struct host_pool *p;
	int rc = 0;

	if (!h->ops->pools)
		return refuse(err, errlen, -EINVAL, "Not implemented for begin_allocate_to_pool");
	npa_lock_acquire(&h->lock);
	p = create_or_incref(h, id);
	if (p == NULL)
		rc = -ENOMEM;
	for (size_t i = 0; rc == 0 && i < h->nscopes; i++)
		if (npa_pool_id_eq(h->scopes[i].id, id))
			rc = refuse(err, errlen, -EBUSY,
				    "beginAllocateToPool: already recording to mempool_id");
	if (rc == 0)
		rc = push_scope(h, &(struct host_scope){ id, filter, arg, p });
	npa_lock_release(&h->lock);
	return rc;
}

int npa_host_end_allocate_to_pool(struct npa_host *h, struct npa_pool_id id, char *err,
				  size_t errlen)
{
	int rc = -ENOENT;

	if (!h->ops->pools)
		return refuse(err, errlen, -EINVAL, "Not implemented for end_allocate_to_pool");
	npa_lock_acquire(&h->lock);
	for (size_t i = 0; i < h->nscopes; i++) {
		if (!npa_pool_id_eq(h->scopes[i].id, id))
			continue;
		for (size_t j = i + 1; j < h->nscopes; j++)
			h->scopes[j - 1] = h->scopes[j];
		h->nscopes--;
		rc = 0;
		break;
	}
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
	struct host_pool *p;
	int rc = 0;

	if (!h->ops->pools)
		return refuse(err, errlen, -EINVAL, "Not implemented for release_pool");
	npa_lock_acquire(&h->lock);
	p = host_pool_find(h, id);
	if (p == NULL || p->use_count <= 0)
		rc = refuse(err, errlen, -ENOENT, "release_pool: no such pool (graph_pools_.at)");
	else if (--p->use_count == 0)
		p->freeable = true;
	npa_lock_release(&h->lock);
	return rc;
}

bool host_pool_routed(const struct npa_host *h, const struct host_pool *p)
{
	for (size_t i = 0; i < h->nscopes; i++)
		if (h->scopes[i].pool == p)
			return true;
	return false;
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

	npa_lock_acquire(&h->lock);
	for (struct host_pool *p = h->pools; p != NULL; p = p->next)
		count++;
	*out = count ? calloc(count, sizeof(**out)) : NULL;
	for (struct host_pool *p = h->pools; *out != NULL && p != NULL; p = p->next, i++)
		(*out)[i] = (struct npa_host_pool_info){
			.id = p->id, .use_count = p->use_count, .freeable = p->freeable,
			.routing = host_pool_routed(h, p), .blocks = p->nblocks,
			.free_bytes = free_bytes(p),
		};
	HASH_ITER(hh, h->blocks, b, tmp)
		for (i = 0; *out != NULL && b->pool != &h->dflt && i < count; i++)
			if (npa_pool_id_eq((*out)[i].id, b->pool->id))
				(*out)[i].bytes += b->size;
	npa_lock_release(&h->lock);
	*n = *out != NULL ? count : 0;
	return count == 0 || *out != NULL ? 0 : -ENOMEM;
}

void host_pools_fini(struct npa_host *h)
{
	struct host_pool *p;

	while ((p = h->pools) != NULL) {
		h->pools = p->next;
		free(p);
	}
	free(h->scopes);
	h->scopes = NULL;
	h->nscopes = h->scope_cap = 0;
}
