/*
 * allocator_switch_lend.c - a loaded plug-in as a MemPool's allocator
 * (torch.npu.MemPool(allocator=...)): the caching allocator asks it for
 * the pool's segments and gives them back to it (mempool.h's segment
 * source).
 *
 * The plug-in stays loaded while the pool lives, whatever is current: the
 * source holds a pin, dropped when the caching allocator deletes the pool.
 * That happens under the device's lock, where a plug-in must not be
 * unloaded (its unloading runs code that may reach the caching allocator),
 * so an entry unpinned there is unloaded by the next sw_release.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator_switch.h"
#include "allocator_switch_impl.h"
#include "alloc/device/mempool.h"

struct sw_lender {
	struct sw *sw;
	struct sw_entry *e;
};

/*
 * The caching allocator checks its own segments itself, under the lock it
 * holds while it asks; only the other plug-ins are looked at here.
 */
static bool lent_foreign(void *arg, const struct npl *self, int device, const void *ptr,
			 size_t size, char *owner, size_t ownerlen)
{
	struct sw_lender *l = arg;

	return sw_plugin_owner(l->sw, self, device, ptr, size, owner, ownerlen);
}

static int lend(void *ctx, int device, size_t size, aclrtStream stream, void **ptr,
		char *err, size_t errlen)
{
	struct sw_lender *l = ctx;

	return npl_lend(l->e->npl, device, size, stream, ptr, lent_foreign, l, err, errlen);
}

static void take_back(void *ctx, void *ptr)
{
	struct sw_lender *l = ctx;
	char err[256];

	/* A retired plug-in's segment is lost to it, not to the daemon: its
	 * accounting ends here all the same (npl_ops.free). */
	npl_ops.free(l->e->npl, ptr, err, sizeof(err));
}

static void forget(void *ctx, void *ptr)
{
	struct sw_lender *l = ctx;

	npl_forget(l->e->npl, ptr);
}

static void drop(void *ctx)
{
	struct sw_lender *l = ctx;
	struct sw *sw = l->sw;

	pthread_mutex_lock(&sw->lock);
	l->e->mempools--;
	struct sw_entry *gone = sw_unpin(sw, l->e);
	if (gone) {
		gone->next = sw->unloading;
		sw->unloading = gone;
		atomic_store_explicit(&sw->unloading_set, true, memory_order_relaxed);
	}
	pthread_mutex_unlock(&sw->lock);
	free(l);
}

int sw_mempool_source(struct sw *sw, const char *name, struct npa_segment_source *out,
		      char *err, size_t errlen)
{
	if (strcmp(name, "caching") == 0) {
		snprintf(err, errlen, "allocator=caching: the caching allocator is a MemPool's "
			 "default; name a loaded plug-in (pluginK)");
		return -EINVAL;
	}
	struct sw_lender *l = calloc(1, sizeof(*l));
	if (!l) {
		snprintf(err, errlen, "out of host memory");
		return -ENOMEM;
	}
	struct sw_entry *e = sw_hold(sw, name);
	char what[64];
	if (!e || npl_fault(e->npl, what, sizeof(what))) {
		snprintf(err, errlen, e ? "%s faulted and was retired: load it again"
				 : "no loaded plug-in %s (ctl/allocator lists them)", name);
		if (e)
			sw_drop(sw, e);
		free(l);
		return e ? -EINVAL : -ENOENT;
	}
	*l = (struct sw_lender){ sw, e };
	pthread_mutex_lock(&sw->lock);
	e->mempools++;
	pthread_mutex_unlock(&sw->lock);
	*out = (struct npa_segment_source){ .alloc = lend, .free = take_back, .forget = forget,
					     .drop = drop, .ctx = l };
	snprintf(out->name, sizeof(out->name), "%s", e->name);
	return 0;
}
