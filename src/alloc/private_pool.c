/*
 * private_pool.c - the bookkeeping of private pools and routing scopes
 * (upstream create_or_incref_pool, beginAllocateToPool, endAllocateToPool,
 * releasePool, get_pool). Memory is released by device_memory.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "private_pool.h"

struct npa_private_pool *npa_private_pool_find(struct npa_private_pools *pp,
					       struct npa_pool_id id)
{
	for (struct npa_private_pool *p = pp->head; p != NULL; p = p->next)
		if (npa_pool_id_eq(p->id, id))
			return p;
	return NULL;
}

static struct npa_private_pool *pool_new(struct npa_private_pools *pp,
					 struct npa_pool_id id)
{
	struct npa_private_pool *p = calloc(1, sizeof(*p));
	struct npa_private_pool **tail = &pp->head;

	if (p == NULL)
		return NULL;
	p->id = id;
	p->use_count = 1;
	npa_pool_init(&p->small, true);
	npa_pool_init(&p->large, false);
	p->small.owner = p;
	p->large.owner = p;
	while (*tail != NULL)
		tail = &(*tail)->next;
	*tail = p;
	return p;
}

int npa_private_pool_incref(struct npa_private_pools *pp, struct npa_pool_id id)
{
	struct npa_private_pool *p = npa_private_pool_find(pp, id);

	if (p == NULL)
		return pool_new(pp, id) != NULL ? 0 : -ENOMEM;
	/* A freeable pool (use_count 0) taken again would be freed under its
	 * user by the next empty_cache; upstream asserts use_count > 0. */
	if (p->use_count <= 0)
		return -EINVAL;
	p->use_count++;
	return 0;
}

static int grow_scopes(struct npa_private_pools *pp)
{
	if (pp->nscopes < pp->cap)
		return 0;
	size_t cap = pp->cap ? 2 * pp->cap : 4;
	struct npa_scope *s = realloc(pp->scopes, cap * sizeof(*s));

	if (s == NULL)
		return -ENOMEM;
	pp->scopes = s;
	pp->cap = cap;
	return 0;
}

/*
 * Room first, so that only upstream's own refusal (already recording,
 * after the incref) leaves a trace; -EBUSY for that one.
 */
int npa_private_pool_begin(struct npa_private_pools *pp, struct npa_pool_id id,
			   npa_pool_filter filter, void *arg)
{
	int rc = grow_scopes(pp);

	if (rc == 0)
		rc = npa_private_pool_incref(pp, id);
	if (rc)
		return rc;
	struct npa_private_pool *p = npa_private_pool_find(pp, id);
	if (npa_private_pool_routed(pp, p))
		return -EBUSY;
	pp->scopes[pp->nscopes++] = (struct npa_scope){ id, filter, arg, p };
	return 0;
}

/* The first scope for `id` goes, as upstream erases the first match. */
int npa_private_pool_end(struct npa_private_pools *pp, struct npa_pool_id id)
{
	for (size_t i = 0; i < pp->nscopes; i++) {
		if (!npa_pool_id_eq(pp->scopes[i].id, id))
			continue;
		memmove(&pp->scopes[i], &pp->scopes[i + 1],
			(pp->nscopes - i - 1) * sizeof(pp->scopes[0]));
		pp->nscopes--;
		return 0;
	}
	return -ENOENT;
}

int npa_private_pool_release(struct npa_private_pools *pp, struct npa_pool_id id)
{
	struct npa_private_pool *p = npa_private_pool_find(pp, id);

	if (p == NULL || p->use_count <= 0)
		return -ENOENT;
	if (--p->use_count == 0)
		p->freeable = true;
	return 0;
}

bool npa_private_pool_routed(const struct npa_private_pools *pp,
			     const struct npa_private_pool *p)
{
	for (size_t i = 0; i < pp->nscopes; i++)
		if (pp->scopes[i].pool == p)
			return true;
	return false;
}

static void pool_free(struct npa_private_pools *pp, struct npa_private_pool *p)
{
	struct npa_private_pool **link = &pp->head;

	while (*link != NULL && *link != p)
		link = &(*link)->next;
	if (*link == p)
		*link = p->next;
	/* The caller has given the physical pages back (npa_handle_cache_drain). */
	free(p->small.spare.h);
	free(p->large.spare.h);
	npa_pool_fini(&p->small);
	npa_pool_fini(&p->large);
	free(p);
}

void npa_private_pool_delete(struct npa_private_pools *pp, struct npa_private_pool *p)
{
	struct npa_segment_source source = p->source;
	bool has_source = p->has_source;

	pool_free(pp, p);
	if (has_source && source.drop != NULL)
		source.drop(source.ctx);
}

void npa_private_pools_fini(struct npa_private_pools *pp)
{
	while (pp->head != NULL)
		pool_free(pp, pp->head);
	free(pp->scopes);
	memset(pp, 0, sizeof(*pp));
}
