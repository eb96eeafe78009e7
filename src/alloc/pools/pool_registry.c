/*
 * pool_registry.c - the bookkeeping of private pools and routing scopes
 * (upstream create_or_incref_pool, beginAllocateToPool,
 * endAllocateToPool, releasePool, get_pool). Memory a pool holds is
 * released by its allocator before it deletes the pool.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool_registry.h"

bool npa_pool_filter_stream(aclrtStream stream, void *arg)
{
	return stream == arg;
}

void pool_registry_init(struct pool_registry *reg, const struct pool_registry_ops *ops)
{
	memset(reg, 0, sizeof(*reg));
	reg->ops = ops;
	reg->newest_first = ops->newest_first;
}

struct private_pool *pool_registry_find(const struct pool_registry *reg, struct npa_pool_id id)
{
	for (struct private_pool *p = reg->head; p != NULL; p = p->next)
		if (npa_pool_id_eq(p->id, id))
			return p;
	return NULL;
}

static struct private_pool *pool_new(struct pool_registry *reg, struct npa_pool_id id)
{
	struct private_pool *p = reg->ops->create();
	struct private_pool **tail = &reg->head;

	if (p == NULL)
		return NULL;
	p->id = id;
	p->use_count = 1;
	while (*tail != NULL)
		tail = &(*tail)->next;
	*tail = p;
	return p;
}

int pool_registry_incref(struct pool_registry *reg, struct npa_pool_id id)
{
	struct private_pool *p = pool_registry_find(reg, id);

	if (p == NULL)
		return pool_new(reg, id) != NULL ? 0 : -ENOMEM;
	/* The next empty_cache may free a freeable pool under its new user,
	 * unless the owner's empty_cache takes such a pool back. */
	if (p->use_count <= 0 && !reg->ops->revives_freeable)
		return -EINVAL;
	p->use_count++;
	p->freeable = false;
	return 0;
}

int pool_registry_reserve(struct pool_registry *reg)
{
	if (reg->nscopes < reg->cap)
		return 0;
	size_t cap = reg->cap ? 2 * reg->cap : 4;
	struct pool_scope *s = realloc(reg->scopes, cap * sizeof(*s));

	if (s == NULL)
		return -ENOMEM;
	reg->scopes = s;
	reg->cap = cap;
	return 0;
}

/* Upstream takes the use before it refuses, so a refused call keeps it. */
int pool_registry_begin(struct pool_registry *reg, struct npa_pool_id id,
			npa_pool_filter filter, void *arg)
{
	int rc = pool_registry_incref(reg, id);

	if (rc)
		return rc;
	struct private_pool *p = pool_registry_find(reg, id);
	if (pool_registry_routed(reg, p))
		return -EBUSY;
	rc = pool_registry_reserve(reg);
	if (rc == 0)
		reg->scopes[reg->nscopes++] = (struct pool_scope){ id, filter, arg, p };
	return rc;
}

/* The first scope for `id` goes, as upstream erases the first match. */
int pool_registry_end(struct pool_registry *reg, struct npa_pool_id id)
{
	for (size_t i = 0; i < reg->nscopes; i++) {
		if (!npa_pool_id_eq(reg->scopes[i].id, id))
			continue;
		memmove(&reg->scopes[i], &reg->scopes[i + 1],
			(reg->nscopes - i - 1) * sizeof(reg->scopes[0]));
		reg->nscopes--;
		return 0;
	}
	return -ENOENT;
}

int pool_registry_release(struct pool_registry *reg, struct npa_pool_id id)
{
	struct private_pool *p = pool_registry_find(reg, id);

	if (p == NULL || p->use_count <= 0)
		return -ENOENT;
	if (--p->use_count == 0)
		p->freeable = true;
	return 0;
}

bool pool_registry_routed(const struct pool_registry *reg, const struct private_pool *p)
{
	for (size_t i = 0; i < reg->nscopes; i++)
		if (reg->scopes[i].pool == p)
			return true;
	return false;
}

void pool_registry_delete(struct pool_registry *reg, struct private_pool *p)
{
	struct private_pool **link = &reg->head;

	while (*link != NULL && *link != p)
		link = &(*link)->next;
	if (*link == p)
		*link = p->next;
	reg->ops->destroy(p);
}

void pool_registry_fini(struct pool_registry *reg)
{
	while (reg->head != NULL)
		pool_registry_delete(reg, reg->head);
	free(reg->scopes);
	reg->scopes = NULL;
	reg->nscopes = reg->cap = 0;
}
