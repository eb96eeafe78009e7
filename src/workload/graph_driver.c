/*
 * graph_driver.c - NPUGraph captures and MemPools as a program drives
 * them (graph_driver.h).
 */
#include <errno.h>
#include <stdio.h>

#include "alloc/caching/caching_allocator.h"
#include "alloc/conf/flavor.h"

#include "graph_driver.h"

struct npa_pool_id wl_pool_handle_id(struct npa *a, struct wl_pool_handle *h)
{
	if (!h->taken) {
		h->id = npa_graph_pool_handle(a, true);
		h->taken = true;
	}
	return h->id;
}

int wl_graph_capture_begin(struct npa *a, struct allocator pools, struct npa_graph **g,
			   const struct wl_capture *c,
			   char *err, size_t errlen)
{
	int rc = *g == NULL ? npa_graph_new(a, pools, g) : 0;

	if (rc) {
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	if (c->enter)
		return npa_graph_enter(*g, c->device, c->stream, c->pool, c->mode, err, errlen);
	return npa_graph_capture_begin(*g, c->device, c->stream, c->pool, c->mode, err, errlen);
}

int wl_graph_pool_of(const struct npa_graph *other, const char *name, int device,
		     struct npa_pool_id *id, char *err, size_t errlen)
{
	struct npa_graph_info info;
	int rc = npa_graph_pool(other, id, err, errlen);

	if (rc)
		return rc;
	npa_graph_get_info(other, &info);
	if (info.device != device) {
		snprintf(err, errlen, "graph %s's pool is on device%d, not device%d", name,
			 info.device, device);
		return -EINVAL;
	}
	return 0;
}

/* createOrIncrefPool, with the segments from `source` when there is one. */
static int create_pool(struct npa *a, int device, struct npa_pool_id id, bool use_on_oom,
		       bool no_split, const struct npa_segment_source *source)
{
	int rc;

	if (source != NULL) {
		rc = npa_mempool_create_from(a, device, id, use_on_oom, no_split, source);
		if (rc)
			source->drop(source->ctx);
		return rc;
	}
	rc = npa_mempool_create(a, device, id, use_on_oom, no_split);
	/* The incref may have gone through before a flag was refused. */
	if (rc)
		npa_mempool_destroy(a, device, id, NULL, 0);
	return rc;
}

/* MemPool() with a plug-in current, as the flavor's upstream makes it. */
static int plugin_current_create(struct npa *a, bool options,
				 const struct npa_segment_source *source, char *err,
				 size_t errlen)
{
	int rc = 0;

	if (!npa_get_flavor(a)->mempool_is_only_an_id) {
		snprintf(err, errlen, "pluggable does not yet support createOrIncrefPool. "
			 "If you need it, please file an issue describing your use case.");
		rc = -EOPNOTSUPP;
	} else if (options || source != NULL) {
		snprintf(err, errlen, "with a plug-in current a MemPool is only an id "
			 "(torch_npu's MemPool(allocator)): use_on_oom, no_split and "
			 "allocator= need the caching allocator current");
		rc = -EINVAL;
	}
	if (rc && source != NULL)
		source->drop(source->ctx);
	return rc;
}

int wl_mempool_create(struct npa *a, struct allocator pools, struct wl_mempool *m,
		      int device, bool use_on_oom, bool no_split,
		      const struct npa_segment_source *source, char *err, size_t errlen)
{
	struct npa_pool_id id = wl_pool_handle_id(a, &m->handle);
	bool plugin = pools.ops->caching(pools.self) == NULL;
	int rc = plugin ? plugin_current_create(a, use_on_oom || no_split, source, err, errlen)
			: create_pool(a, device, id, use_on_oom, no_split, source);

	if (rc == 0) {
		m->live = true;
		m->device = device;
		m->only_an_id = plugin;
		m->pools = pools;
	}
	return rc;
}

int wl_mempool_begin(struct npa *a, struct wl_mempool *m, aclrtStream s, int32_t stream,
		     enum wl_refusal refusal, char *err, size_t errlen)
{
	struct allocator p = m->pools;
	int rc = p.ops->begin_allocate_to_pool(p.self, m->device, m->handle.id,
					       npa_pool_filter_stream, s, err, errlen);

	(void)a;
	if (rc == -EBUSY && refusal == WL_REFUSAL_UNDONE)
		p.ops->release_pool(p.self, m->device, m->handle.id, NULL, 0);
	if (rc == 0) {
		m->routing = true;
		m->stream = stream;
	}
	return rc;
}

int wl_mempool_end(struct npa *a, struct wl_mempool *m, char *err, size_t errlen)
{
	struct allocator p = m->pools;
	int rc = p.ops->end_allocate_to_pool(p.self, m->device, m->handle.id, err, errlen);

	(void)a;
	if (rc == 0)
		rc = p.ops->release_pool(p.self, m->device, m->handle.id, err, errlen);
	if (rc == 0)
		m->routing = false;
	return rc;
}

int wl_mempool_release(struct npa *a, struct wl_mempool *m, char *err, size_t errlen)
{
	m->live = false;
	if (m->only_an_id)
		return 0;
	return npa_mempool_destroy(a, m->device, m->handle.id, err, errlen);
}

void wl_mempool_drop(struct npa *a, struct wl_mempool *m, char *err, size_t errlen)
{
	if (m->routing)
		wl_mempool_end(a, m, NULL, 0);
	if (m->live)
		wl_mempool_release(a, m, err, errlen);
	*m = (struct wl_mempool){ 0 };
}
