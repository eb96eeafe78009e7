/*
 * allocator_switch_pools.c - private pools through the switch, as
 * NPUGraph and use_mem_pool reach them upstream: beginAllocateToPool goes
 * to the allocator current at that moment (the caching allocator's pools,
 * or a plug-in's begin_allocate_to_pool hook), and the scope's end and the
 * pool's release go back to the allocator that began it, whatever is
 * current by then.
 *
 * A plug-in keeps its pools itself; the switch remembers which plug-in
 * each pool id went to, with upstream's use count, so that the plug-in
 * stays loaded while one of its pools lives and pools/ can name it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "allocator_switch.h"
#include "allocator_switch_impl.h"

struct sw_pool {
	struct npa_pool_id id;
	int device;
	struct sw_entry *e;   /* pinned while the pool lives */
	unsigned scopes;      /* begun, not yet ended */
	unsigned uses;        /* begun, not yet released */
	struct sw_pool *next;
};

/* Lock held. */
static struct sw_pool *find(struct sw *sw, int device, struct npa_pool_id id)
{
	for (struct sw_pool *p = sw->pools; p; p = p->next)
		if (p->device == device && npa_pool_id_eq(p->id, id))
			return p;
	return NULL;
}

/* A plug-in took a scope of pool `id`: remembered, the plug-in pinned. */
static int remember(struct sw *sw, struct sw_entry *e, int device, struct npa_pool_id id)
{
	pthread_mutex_lock(&sw->lock);
	struct sw_pool *p = find(sw, device, id);
	if (!p && (p = calloc(1, sizeof(*p)))) {
		*p = (struct sw_pool){ .id = id, .device = device, .e = e, .next = sw->pools };
		sw->pools = p;
		sw_pin(e);
	}
	if (p) {
		p->scopes++;
		p->uses++;
	}
	pthread_mutex_unlock(&sw->lock);
	return p ? 0 : -ENOMEM;
}

int sw_begin_pool(void *self, int device, struct npa_pool_id id, npa_pool_filter filter,
			 void *arg, char *err, size_t errlen)
{
	struct sw *sw = self;
	struct sw_entry *e = sw_pin_current(sw);
	int rc = e->a.ops->begin_allocate_to_pool(e->a.self, device, id, filter, arg, err,
						   errlen);

	if (rc == -EFAULT)
		sw_note_fault(sw, e);
	if (rc == 0 && !e->resident)
		rc = remember(sw, e, device, id);
	sw_release(sw, e);
	return rc;
}

/* The plug-in that holds pool `id` pinned, if a scope or a use of it is
 * open (`scope`: a scope), else the caching allocator. */
static struct sw_entry *pin_owner_of(struct sw *sw, int device, struct npa_pool_id id,
				     bool scope)
{
	pthread_mutex_lock(&sw->lock);
	struct sw_pool *p = find(sw, device, id);
	struct sw_entry *e = p && (scope ? p->scopes : p->uses) ? p->e : &sw->caching;
	sw_pin(e);
	pthread_mutex_unlock(&sw->lock);
	return e;
}

int sw_end_pool(void *self, int device, struct npa_pool_id id, char *err, size_t errlen)
{
	struct sw *sw = self;
	struct sw_entry *e = pin_owner_of(sw, device, id, true);
	int rc = e->a.ops->end_allocate_to_pool(e->a.self, device, id, err, errlen);

	if (rc == -EFAULT)
		sw_note_fault(sw, e);
	if (!e->resident) {
		pthread_mutex_lock(&sw->lock);
		find(sw, device, id)->scopes--;
		pthread_mutex_unlock(&sw->lock);
	}
	sw_release(sw, e);
	return rc;
}

/* Lock held. One use of `p` fewer; the last one forgets it, and returns
 * its plug-in if nothing else keeps that loaded. */
static struct sw_entry *drop_use(struct sw *sw, struct sw_pool *p)
{
	if (--p->uses)
		return NULL;
	for (struct sw_pool **pp = &sw->pools; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	struct sw_entry *gone = sw_unpin(sw, p->e);
	free(p);
	return gone;
}

int sw_release_pool(void *self, int device, struct npa_pool_id id, char *err,
			   size_t errlen)
{
	struct sw *sw = self;
	struct sw_entry *e = pin_owner_of(sw, device, id, false), *gone = NULL;
	int rc = e->a.ops->release_pool(e->a.self, device, id, err, errlen);

	if (rc == -EFAULT)
		sw_note_fault(sw, e);
	if (!e->resident) {
		pthread_mutex_lock(&sw->lock);
		gone = drop_use(sw, find(sw, device, id));
		pthread_mutex_unlock(&sw->lock);
	}
	sw_release(sw, e);
	sw_reap(sw, gone);
	return rc;
}

int sw_pools_of(struct sw *sw, int device, struct sw_pool_info **out, size_t *n)
{
	pthread_mutex_lock(&sw->lock);
	size_t count = 0;
	for (struct sw_pool *p = sw->pools; p; p = p->next)
		count += p->device == device;
	struct sw_pool_info *info = calloc(count ? count : 1, sizeof(*info));
	size_t i = 0;
	for (struct sw_pool *p = sw->pools; info && p; p = p->next) {
		if (p->device != device)
			continue;
		info[i] = (struct sw_pool_info){ .id = p->id, .scopes = p->scopes,
						 .uses = p->uses };
		snprintf(info[i++].allocator, sizeof(info->allocator), "%s", p->e->name);
	}
	pthread_mutex_unlock(&sw->lock);
	*out = info;
	*n = i;
	return info ? 0 : -ENOMEM;
}

bool sw_plugin_routes(struct sw *sw)
{
	for (struct sw_pool *p = sw->pools; p; p = p->next)
		if (p->scopes)
			return true;
	return false;
}

void sw_pools_fini(struct sw *sw)
{
	while (sw->pools) {
		struct sw_pool *p = sw->pools;
		sw->pools = p->next;
		free(p);
	}
}
