/*
 * mempool.c - private pools from outside: each call takes the device's
 * lock and says what upstream says when it refuses (MemPool.cpp,
 * NPUCachingAllocator.cpp createOrIncrefPool, beginAllocateToPool,
 * endAllocateToPool, releasePool, emptyCache(id), snapshot(id),
 * checkPoolLiveAllocations).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "devices.h"
#include "mempool.h"

static struct npa_device *lock_device(struct npa *a, int device)
{
	if (device < 0 || device >= a->ndev)
		return NULL;
	npa_device_lock(&a->dev[device]);
	return &a->dev[device];
}

struct npa_pool_id npa_graph_pool_handle(struct npa *a, bool user_created)
{
	if (user_created)
		return (struct npa_pool_id){ 0, __atomic_fetch_add(&a->next_user_pool, 1,
								   __ATOMIC_RELAXED) };
	return (struct npa_pool_id){ __atomic_fetch_add(&a->next_graph_pool, 1,
							__ATOMIC_RELAXED), 0 };
}

/* The default pool is no private pool: nothing may route to or release it. */
static int check_id(struct npa_pool_id id, char *err, size_t errlen)
{
	if (!npa_pool_id_is_default(id))
		return 0;
	npa_set_err(err, errlen, "(0, 0) is the default pool, not a private pool");
	return -EINVAL;
}

int npa_create_or_incref_pool(struct npa *a, int device, struct npa_pool_id id)
{
	if (npa_pool_id_is_default(id))
		return -EINVAL;
	struct npa_device *dev = lock_device(a, device);
	if (dev == NULL)
		return -ENODEV;
	int rc = pool_registry_incref(&dev->pools, id);
	npa_lock_release(&dev->lock);
	return rc;
}

/* Set a flag of pool `id`; -ENOENT for no such pool. */
static int set_flag(struct npa *a, int device, struct npa_pool_id id,
		    size_t offset, bool on)
{
	struct npa_device *dev = lock_device(a, device);

	if (dev == NULL)
		return -ENODEV;
	struct npa_private_pool *p = npa_private_pool_find(&dev->pools, id);
	if (p != NULL)
		*(bool *)((char *)p + offset) = on;
	npa_lock_release(&dev->lock);
	return p != NULL ? 0 : -ENOENT;
}

int npa_set_use_on_oom(struct npa *a, int device, struct npa_pool_id id, bool on)
{
	return set_flag(a, device, id, offsetof(struct npa_private_pool, use_on_oom), on);
}

int npa_set_no_split(struct npa *a, int device, struct npa_pool_id id)
{
	return set_flag(a, device, id, offsetof(struct npa_private_pool, no_split), true);
}

int npa_begin_allocate_to_pool(struct npa *a, int device, struct npa_pool_id id,
			       npa_pool_filter filter, void *arg, char *err,
			       size_t errlen)
{
	int rc = check_id(id, err, errlen);

	if (rc)
		return rc;
	struct npa_device *dev = lock_device(a, device);
	if (dev == NULL)
		return -ENODEV;
	rc = npa_private_pool_begin(&dev->pools, id, filter, arg);
	npa_lock_release(&dev->lock);
	if (rc == -EBUSY)
		npa_set_err(err, errlen, "beginAllocateToPool: already recording to mempool_id");
	return rc;
}

int npa_end_allocate_to_pool(struct npa *a, int device, struct npa_pool_id id,
			     char *err, size_t errlen)
{
	struct npa_device *dev = lock_device(a, device);

	if (dev == NULL)
		return -ENODEV;
	int rc = pool_registry_end(&dev->pools, id);
	npa_lock_release(&dev->lock);
	if (rc == -ENOENT)
		npa_set_err(err, errlen, "endAllocatePool: not currently recording to mempool_id");
	return rc;
}

int npa_release_pool(struct npa *a, int device, struct npa_pool_id id, char *err,
		     size_t errlen)
{
	struct npa_device *dev = lock_device(a, device);

	if (dev == NULL)
		return -ENODEV;
	int rc = pool_registry_release(&dev->pools, id);
	npa_lock_release(&dev->lock);
	if (rc == -ENOENT)
		npa_set_err(err, errlen, "Could not find pool of id");
	return rc;
}

int npa_routing_device(struct npa *a)
{
	int found = -1;

	for (int i = 0; i < a->ndev && found < 0; i++) {
		npa_device_lock(&a->dev[i]);
		if (a->dev[i].pools.nscopes != 0)
			found = i;
		npa_lock_release(&a->dev[i].lock);
	}
	return found;
}

int npa_empty_cache_pool(struct npa *a, int device, struct npa_pool_id id)
{
	struct npa_device *dev = lock_device(a, device);

	if (dev == NULL)
		return -ENODEV;
	int rc = npa_release_pool_blocks(dev, id, false);

	npa_lock_release(&dev->lock);
	return rc;
}

int npa_mempool_create(struct npa *a, int device, struct npa_pool_id id, bool use_on_oom,
		       bool no_split)
{
	int rc = npa_create_or_incref_pool(a, device, id);

	if (rc == 0 && use_on_oom)
		rc = npa_set_use_on_oom(a, device, id, true);
	if (rc == 0 && no_split)
		rc = npa_set_no_split(a, device, id);
	return rc;
}

int npa_mempool_create_from(struct npa *a, int device, struct npa_pool_id id,
			    bool use_on_oom, bool no_split,
			    const struct npa_segment_source *source)
{
	if (npa_pool_id_is_default(id))
		return -EINVAL;
	struct npa_device *dev = lock_device(a, device);
	if (dev == NULL)
		return -ENODEV;
	int rc = npa_private_pool_find(&dev->pools, id) ? -EEXIST
							 : pool_registry_incref(&dev->pools, id);
	if (rc == 0) {
		struct npa_private_pool *p = npa_private_pool_find(&dev->pools, id);
		p->source = *source;
		p->has_source = true;
		p->use_on_oom = use_on_oom;
		p->no_split = no_split;
	}
	npa_lock_release(&dev->lock);
	return rc;
}

int npa_mempool_begin_stream(struct npa *a, int device, struct npa_pool_id id,
			     aclrtStream stream, char *err, size_t errlen)
{
	return npa_begin_allocate_to_pool(a, device, id, npa_pool_filter_stream, stream, err,
					  errlen);
}

int npa_mempool_end(struct npa *a, int device, struct npa_pool_id id, char *err,
		    size_t errlen)
{
	int rc = npa_end_allocate_to_pool(a, device, id, err, errlen);

	return rc ? rc : npa_release_pool(a, device, id, err, errlen);
}

int npa_mempool_destroy(struct npa *a, int device, struct npa_pool_id id, char *err,
			size_t errlen)
{
	npa_set_use_on_oom(a, device, id, false);
	int rc = npa_release_pool(a, device, id, err, errlen);

	return rc ? rc : npa_empty_cache_pool(a, device, id);
}

static bool listed(void *const *ptrs, size_t n, const void *p)
{
	for (size_t i = 0; i < n; i++)
		if (ptrs[i] == p)
			return true;
	return false;
}

/* Every allocated block of the pool is in `ptrs`, and as many as there are. */
static bool live_allocations_are(struct npa_device *dev, const struct npa_private_pool *pp,
				 void *const *ptrs, size_t n)
{
	struct npa_segment *seg;
	size_t count = 0;

	RB_FOREACH(seg, npa_segment_tree, &dev->segments) {
		if (seg->pool->owner != pp)
			continue;
		for (const struct npa_block *b = seg->head; b != NULL; b = b->next) {
			if (!b->allocated)
				continue;
			if (!listed(ptrs, n, b->ptr))
				return false;
			count++;
		}
	}
	return count == n;
}

int npa_check_pool_live_allocations(struct npa *a, int device, struct npa_pool_id id,
				    void *const *ptrs, size_t n, bool *out,
				    char *err, size_t errlen)
{
	struct npa_device *dev = lock_device(a, device);

	if (dev == NULL)
		return -ENODEV;
	struct npa_private_pool *pp = npa_private_pool_find(&dev->pools, id);
	if (pp != NULL)
		*out = live_allocations_are(dev, pp, ptrs, n);
	npa_lock_release(&dev->lock);
	if (pp == NULL)
		npa_set_err(err, errlen, "Could not find pool of id");
	return pp != NULL ? 0 : -ENOENT;
}

int npa_snapshot_pool(struct npa *a, int device, struct npa_pool_id id,
		      struct npa_snapshot *out)
{
	*out = (struct npa_snapshot){ 0 };
	struct npa_device *dev = lock_device(a, device);
	if (dev == NULL)
		return -ENODEV;
	int rc = npa_device_snapshot_pool(dev, id, out);
	npa_lock_release(&dev->lock);
	if (rc < 0)
		npa_snapshot_release(out);
	return rc;
}

/* The pool's segments and bytes, from its blocks. A segment is what
 * snapshot(mempool_id) lists: an expandable segment counts once for each
 * mapped run, as upstream's snapshot() reports it. */
static void tally_pool(struct npa_device *dev, const struct npa_private_pool *pp,
		       struct npa_pool_info *info)
{
	struct npa_segment *seg;

	RB_FOREACH(seg, npa_segment_tree, &dev->segments) {
		if (seg->pool->owner != pp)
			continue;
		for (const struct npa_block *b = seg->head; b != NULL; b = b->next) {
			if (!b->mapped)
				continue;
			if (b->prev == NULL || !b->prev->mapped)
				info->segments++;
			info->reserved_bytes += b->size;
			if (b->allocated)
				info->allocated_bytes += b->size;
			if (b->allocated || b->event_count > 0)
				info->active_bytes += b->size;
		}
	}
}

static void describe_pool(struct npa_device *dev, const struct npa_private_pool *pp,
			  struct npa_pool_info *info)
{
	*info = (struct npa_pool_info){
		.id = pp->base.id,
		.use_count = pp->base.use_count,
		.freeable = pp->base.freeable,
		.use_on_oom = pp->use_on_oom,
		.no_split = pp->no_split,
		.routing = pool_registry_routed(&dev->pools, &pp->base),
		.device_mallocs = pp->malloc_count,
	};
	if (pp->has_source)
		snprintf(info->allocator, sizeof(info->allocator), "%s", pp->source.name);
	tally_pool(dev, pp, info);
}

int npa_pool_list(struct npa *a, int device, struct npa_pool_info **out, size_t *n)
{
	struct npa_private_pool *pp;
	size_t count = 0;

	*out = NULL;
	*n = 0;
	struct npa_device *dev = lock_device(a, device);
	if (dev == NULL)
		return -ENODEV;
	for (pp = npa_private_pool_first(&dev->pools); pp != NULL;
	     pp = npa_private_pool_next(pp))
		count++;
	struct npa_pool_info *all = count ? calloc(count, sizeof(*all)) : NULL;
	if (count != 0 && all == NULL) {
		npa_lock_release(&dev->lock);
		return -ENOMEM;
	}
	for (pp = npa_private_pool_first(&dev->pools); pp != NULL;
	     pp = npa_private_pool_next(pp))
		describe_pool(dev, pp, &all[(*n)++]);
	npa_lock_release(&dev->lock);
	*out = all;
	return 0;
}
