/*
 * allocator_switch.c - which allocator serves an allocation, and which one
 * frees it.
 *
 * Every pointer a plug-in handed out is mapped to it, so a swap never
 * changes who frees a live block; a pointer no plug-in made is the caching
 * allocator's, which keeps its own count (npa_live). An allocator is
 * pinned (busy) while a call runs on it outside the lock; a retired
 * plug-in is unloaded by whoever drops its last block or its last pin.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Owners are keyed by address alone: one multiply spreads an address over
 * the buckets for a fraction of uthash's byte-wise Jenkins hash. */
#define HASH_FUNCTION(keyptr, keylen, hashv)                                         \
	((hashv) = (unsigned)(((uint64_t)*(const uintptr_t *)(keyptr) >> 4) *         \
			      UINT64_C(0x9E3779B97F4A7C15) >> 32))
#include <uthash.h>

#include "allocator_switch.h"
#include "alloc/host/host_allocator.h"

#include "allocator_switch_impl.h"
#include "alloc/device/mempool.h"

struct sw_owner {
	void *ptr;
	size_t size;
	struct sw_entry *e;
	UT_hash_handle hh;
};

int sw_create(const struct sw_options *opt, struct sw **out)
{
	if (!opt->caching || opt->device_count < 1)
		return -EINVAL;
	struct sw *sw = calloc(1, sizeof(*sw));
	if (!sw)
		return -ENOMEM;
	sw->plugin_dirs = strdup(opt->plugin_dirs ? opt->plugin_dirs : "");
	if (!sw->plugin_dirs) {
		free(sw);
		return -ENOMEM;
	}
	sw->fault_fd = sw->reaper_stop_fd = -1;
	if (opt->plugin_host && !(sw->plugin_host = strdup(opt->plugin_host))) {
		free(sw->plugin_dirs);
		free(sw);
		return -ENOMEM;
	}
	sw->plugin_timeout_ms = opt->plugin_timeout_ms;
	sw->timeout_fails_replay = opt->timeout_fails_replay;
	sw->plugin_blocks = opt->plugin_blocks;
	sw->npa = opt->caching;
	sw->device_count = opt->device_count;
	sw->owner = opt->owner;
	sw->on_unload = opt->on_unload;
	sw->on_unloading = opt->on_unloading;
	sw->on_fault = opt->on_fault;
	sw->on_warn = opt->on_warn;
	sw->ctx = opt->ctx;
	sw->caching.a = npa_allocator(opt->caching);
	sw->caching.resident = true;
	snprintf(sw->caching.name, sizeof(sw->caching.name), "caching");
	sw->caching.since = time(NULL);
	sw->current = &sw->caching;
	pthread_mutex_init(&sw->lock, NULL);
	pthread_mutex_init(&sw->swap_lock, NULL);
	*out = sw;
	return 0;
}

void sw_destroy(struct sw *sw)
{
	struct sw_owner *o, *tmp;

	if (!sw)
		return;
	/* The reaper goes first; no host's end is told any more. */
	sw_reaper_stop(sw);
	for (struct sw_entry *e = sw->plugins; e; e = e->next)
		npl_set_fault_notify(e->npl, -1);
	HASH_ITER(hh, sw->owners, o, tmp) {
		HASH_DEL(sw->owners, o);
		free(o);
	}
	sw_pools_fini(sw);
	sw_unload_dropped(sw);
	while (sw->plugins) {
		struct sw_entry *e = sw->plugins;
		sw->plugins = e->next;
		if (sw->on_unloading)
			sw->on_unloading(sw->ctx, e);
		npl_destroy(e->npl);
		free(e);
	}
	pthread_mutex_destroy(&sw->lock);
	pthread_mutex_destroy(&sw->swap_lock);
	sw_reaper_close(sw);
	free(sw->plugin_dirs);
	free(sw->plugin_host);
	free(sw);
}

void sw_pin(struct sw_entry *e)
{
	if (!e->resident)
		e->busy++;
}

/* Lock held. Unlinks `e` and returns it if nothing keeps it any more. */
struct sw_entry *sw_unpin(struct sw *sw, struct sw_entry *e)
{
	if (e->resident)
		return NULL;
	e->busy--;
	if (e == sw->current || e->busy || e->live_blocks || e->kept)
		return NULL;
	for (struct sw_entry **pp = &sw->plugins; *pp; pp = &(*pp)->next)
		if (*pp == e) {
			*pp = e->next;
			return e;
		}
	return NULL;
}

/* Unload what sw_unpin unlinked; outside the lock (plug-in code runs). */
void sw_reap(struct sw *sw, struct sw_entry *e)
{
	char path[PATH_MAX];

	if (!e)
		return;
	snprintf(path, sizeof(path), "%s", npl_plugin(e->npl)->path);
	if (sw->on_unloading)
		sw->on_unloading(sw->ctx, e);
	npl_destroy(e->npl);
	if (sw->on_unload)
		sw->on_unload(sw->ctx, e->name, path);
	free(e);
}

/* Lock held. The entries a deleted MemPool let go of, to unload. */
static struct sw_entry *take_unloading(struct sw *sw)
{
	struct sw_entry *later = sw->unloading;

	sw->unloading = NULL;
	atomic_store_explicit(&sw->unloading_set, false, memory_order_relaxed);
	return later;
}

static void reap_list(struct sw *sw, struct sw_entry *e)
{
	while (e) {
		struct sw_entry *next = e->next;
		sw_reap(sw, e);
		e = next;
	}
}

void sw_release(struct sw *sw, struct sw_entry *e)
{
	/* The caching allocator's pins are free; a MemPool's plug-in let go
	 * meanwhile is unloaded by this call all the same. */
	if (e->resident &&
	    !atomic_load_explicit(&sw->unloading_set, memory_order_relaxed))
		return;
	pthread_mutex_lock(&sw->lock);
	struct sw_entry *gone = sw_unpin(sw, e);
	struct sw_entry *later = take_unloading(sw);
	pthread_mutex_unlock(&sw->lock);
	sw_reap(sw, gone);
	reap_list(sw, later);
}

void sw_unload_dropped(struct sw *sw)
{
	pthread_mutex_lock(&sw->lock);
	struct sw_entry *later = take_unloading(sw);
	pthread_mutex_unlock(&sw->lock);
	reap_list(sw, later);
}

struct sw_entry *sw_pin_current(struct sw *sw)
{
	struct sw_entry *e = atomic_load_explicit(&sw->current, memory_order_acquire);

	/* Compared, not read: a plug-in loaded here may be unloaded already. */
	if (e == &sw->caching)
		return e;
	pthread_mutex_lock(&sw->lock);
	e = sw->current;
	sw_pin(e);
	pthread_mutex_unlock(&sw->lock);
	return e;
}

static void make_current(struct sw *sw, struct sw_entry *e);

/* Lock held. A plug-in that faulted and was not yet retired, pinned. */
static struct sw_entry *pin_faulted(struct sw *sw)
{
	char what[8];

	for (struct sw_entry *p = sw->plugins; p; p = p->next)
		if (!p->fault_told && allocator_faulted(p->a, what, sizeof(what))) {
			sw_pin(p);
			return p;
		}
	return NULL;
}

/* If `e` faulted: it stops being current, and its fault is told once. */
static void retire(struct sw *sw, struct sw_entry *e)
{
	char what[PATH_MAX + 512];

	if (!allocator_faulted(e->a, what, sizeof(what)))
		return;
	pthread_mutex_lock(&sw->swap_lock);
	pthread_mutex_lock(&sw->lock);
	bool first = !e->fault_told;
	bool current = sw->current == e;
	e->fault_told = true;
	pthread_mutex_unlock(&sw->lock);
	if (first && current)
		make_current(sw, &sw->caching);
	pthread_mutex_unlock(&sw->swap_lock);
	if (first && sw->on_fault)
		sw->on_fault(sw->ctx, e->name, what);
}

/* A MemPool's plug-in that faulted inside the caching allocator's call,
 * or a plug-in whose host died outside any call. */
void sw_retire_faulted(struct sw *sw)
{
	for (;;) {
		pthread_mutex_lock(&sw->lock);
		struct sw_entry *found = pin_faulted(sw);
		pthread_mutex_unlock(&sw->lock);
		if (!found)
			return;
		retire(sw, found);
		sw_release(sw, found);
	}
}

/* -EFAULT from `e` is a fault of its own code (a guard's refusal is not
 * one), or, from the resident allocator, of a plug-in it borrowed from. */
void sw_note_fault(struct sw *sw, struct sw_entry *e)
{
	if (e->resident)
		sw_retire_faulted(sw);
	else
		retire(sw, e);
}

/* Lock held. */
static void add_owner(struct sw *sw, struct sw_owner *o)
{
	HASH_ADD_PTR(sw->owners, ptr, o);
	o->e->live_blocks++;
	o->e->live_bytes += o->size;
	atomic_fetch_add_explicit(&sw->owned, 1, memory_order_release);
}

/* Lock held. */
static void del_owner(struct sw *sw, struct sw_owner *o)
{
	HASH_DEL(sw->owners, o);
	o->e->live_blocks--;
	o->e->live_bytes -= o->size;
	atomic_fetch_sub_explicit(&sw->owned, 1, memory_order_relaxed);
}

/* Map a plug-in's new block to it; without room, the block goes back. */
static int own(struct sw *sw, struct sw_entry *e, void **ptr, size_t size, char *err,
	       size_t errlen)
{
	struct sw_owner *o = malloc(sizeof(*o));

	if (!o) {
		e->a.ops->free(e->a.self, *ptr, err, errlen);
		*ptr = NULL;
		snprintf(err, errlen, "out of host memory");
		return -ENOMEM;
	}
	*o = (struct sw_owner){ .ptr = *ptr, .size = size, .e = e };
	pthread_mutex_lock(&sw->lock);
	add_owner(sw, o);
	pthread_mutex_unlock(&sw->lock);
	return 0;
}

/* What follows a call on `e` that returned `rc`: a fault noted, a
 * plug-in's block mapped to it (the caching allocator's needs no record). */
static int malloc_answered(struct sw *sw, struct sw_entry *e, int rc, void **ptr, size_t size,
			   char *err, size_t errlen)
{
	char what[8];

	/* A plug-in that never returned fails the allocation with ENOMEM. */
	if (rc == -EFAULT || (rc == -ENOMEM && allocator_faulted(e->a, what, sizeof(what)))) {
		sw_note_fault(sw, e);
		if (sw->timeout_fails_replay)
			rc = -EFAULT;
	}
	if (rc || !*ptr || e == &sw->caching)
		return rc;
	return own(sw, e, ptr, size, err, errlen);
}

/* Allocate from `e`, pinned by the caller. */
static int malloc_pinned(struct sw *sw, struct sw_entry *e, int device, size_t size,
			 aclrtStream stream, void **ptr, char *err, size_t errlen)
{
	int rc = e == &sw->caching ? npa_malloc(sw->npa, device, size, stream, ptr, err, errlen)
				   : e->a.ops->malloc(e->a.self, device, size, stream, ptr, err, errlen);

	return malloc_answered(sw, e, rc, ptr, size, err, errlen);
}

/* The caching allocator's answer was not a plain success, or a plug-in
 * waits to be unloaded: the whole of what a call's end does. */
static __attribute__((noinline)) int caching_malloc_end(struct sw *sw, int rc, void **ptr,
							size_t size, char *err, size_t errlen)
{
	rc = malloc_answered(sw, &sw->caching, rc, ptr, size, err, errlen);
	sw_release(sw, &sw->caching);
	return rc;
}

/* With the caching allocator current (every daemon allocation), one call
 * and two loads: it needs no pin, and its success no record. */
int sw_malloc(struct sw *sw, int device, size_t size, aclrtStream stream,
	      void **ptr, char *err, size_t errlen)
{
	struct sw_entry *e = atomic_load_explicit(&sw->current, memory_order_acquire);

	if (e == &sw->caching) {
		int rc = npa_malloc(sw->npa, device, size, stream, ptr, err, errlen);

		if (__builtin_expect(rc != 0 || atomic_load_explicit(&sw->unloading_set,
								     memory_order_relaxed), 0))
			return caching_malloc_end(sw, rc, ptr, size, err, errlen);
		return 0;
	}
	e = sw_pin_current(sw);
	int rc = malloc_pinned(sw, e, device, size, stream, ptr, err, errlen);

	sw_release(sw, e);
	return rc;
}

int sw_malloc_from(struct sw *sw, struct sw_entry *e, int device, size_t size,
		   aclrtStream stream, void **ptr, char *err, size_t errlen)
{
	return malloc_pinned(sw, e, device, size, stream, ptr, err, errlen);
}

struct sw_entry *sw_hold(struct sw *sw, const char *name)
{
	struct sw_entry *e = strcmp(name, "caching") == 0 ? &sw->caching : NULL;

	pthread_mutex_lock(&sw->lock);
	for (struct sw_entry *p = sw->plugins; p && !e; p = p->next)
		if (strcmp(p->name, name) == 0)
			e = p;
	if (e)
		sw_pin(e);
	pthread_mutex_unlock(&sw->lock);
	return e;
}

struct sw_entry *sw_hold_code(struct sw *sw, const void *obj, const void *code)
{
	struct sw_entry *e = NULL;

	pthread_mutex_lock(&sw->lock);
	for (struct sw_entry *p = sw->plugins; p && !e; p = p->next)
		if (sw_entry_has_code(p, obj, code))
			e = p;
	if (e)
		sw_pin(e);
	pthread_mutex_unlock(&sw->lock);
	return e;
}

bool sw_entry_has_code(const struct sw_entry *e, const void *obj, const void *code)
{
	return !e->resident && plugin_has_code(npl_plugin(e->npl), obj, code);
}

void sw_drop(struct sw *sw, struct sw_entry *e)
{
	sw_release(sw, e);
}

const char *sw_entry_name(const struct sw_entry *e)
{
	return e->name;
}

static struct sw_entry *pin_owner(struct sw *sw, void *ptr);

size_t sw_block_size(struct sw *sw, const void *ptr)
{
	struct sw_entry *e = pin_owner(sw, (void *)ptr);
	size_t size = e->a.ops->block_size(e->a.self, ptr);

	sw_release(sw, e);
	return size;
}

/* A pointer no plug-in made: the caching allocator's, or nobody's. */
static int free_caching(struct sw *sw, void *ptr, char *err, size_t errlen)
{
	int rc = npa_free(sw->npa, ptr, err, errlen);

	if (rc == -EINVAL) {
		pthread_mutex_lock(&sw->lock);
		sw->refused_frees++;
		pthread_mutex_unlock(&sw->lock);
		snprintf(err, errlen, "Trying to free a pointer not allocated here");
	} else if (rc == -EFAULT) {
		sw_note_fault(sw, &sw->caching);
	}
	return rc;
}

/* The plug-in that made `ptr`, pinned, its record gone; NULL if none. */
static struct sw_entry *take_owner(struct sw *sw, void *ptr)
{
	struct sw_owner *o = NULL;
	struct sw_entry *e = NULL;

	/* No plug-in block live: no lock to take. A block's record is
	 * made before its malloc returns, so before its free can ask. */
	if (atomic_load_explicit(&sw->owned, memory_order_acquire) == 0)
		return NULL;
	pthread_mutex_lock(&sw->lock);
	HASH_FIND_PTR(sw->owners, &ptr, o);
	if (o) {
		e = o->e;
		del_owner(sw, o);
		sw_pin(e);
	}
	pthread_mutex_unlock(&sw->lock);
	free(o);
	return e;
}

int sw_free(struct sw *sw, void *ptr, char *err, size_t errlen)
{
	struct sw_entry *e;
	int rc;

	if (!ptr)
		return 0;
	if (!(e = take_owner(sw, ptr)))
		return free_caching(sw, ptr, err, errlen);
	rc = e->a.ops->free(e->a.self, ptr, err, errlen);
	if (rc == -EFAULT)
		sw_note_fault(sw, e);
	sw_release(sw, e);
	return rc;
}

/* The owner of a live pointer, pinned: a plug-in that made it, else the
 * caching allocator (which answers for pointers it does not know). */
static struct sw_entry *pin_owner(struct sw *sw, void *ptr)
{
	struct sw_owner *o = NULL;
	struct sw_entry *e = &sw->caching;

	if (atomic_load_explicit(&sw->owned, memory_order_acquire) == 0)
		return e;
	pthread_mutex_lock(&sw->lock);
	HASH_FIND_PTR(sw->owners, &ptr, o);
	if (o)
		e = o->e;
	sw_pin(e);
	pthread_mutex_unlock(&sw->lock);
	return e;
}

enum stream_use { RECORD, ERASE };

static int stream_use(struct sw *sw, void *ptr, aclrtStream stream, enum stream_use u)
{
	struct sw_entry *e = pin_owner(sw, ptr);
	int rc;

	rc = u == RECORD ? e->a.ops->record_stream(e->a.self, ptr, stream)
			 : e->a.ops->erase_stream(e->a.self, ptr, stream);
	if (rc == -EFAULT)
		sw_note_fault(sw, e);
	sw_release(sw, e);
	return rc;
}

/* The built-in allocator outlives every swap, so it hears of every stream. */
int sw_set_stream_number(struct sw *sw, aclrtStream stream, int device, long number)
{
	return npa_set_stream_number(sw->npa, stream, device, number);
}

int sw_record_stream(struct sw *sw, void *ptr, aclrtStream stream)
{
	return stream_use(sw, ptr, stream, RECORD);
}

int sw_erase_stream(struct sw *sw, void *ptr, aclrtStream stream)
{
	return stream_use(sw, ptr, stream, ERASE);
}

/* Make `e` current; the one it replaces is unloaded if nothing holds it. */
/* Lock held. A new plug-in gets the next id and goes last. */
static void add_plugin(struct sw *sw, struct sw_entry *e)
{
	e->id = ++sw->last_id;
	snprintf(e->name, sizeof(e->name), "plugin%u", e->id);
	struct sw_entry **pp = &sw->plugins;
	while (*pp)
		pp = &(*pp)->next;
	*pp = e;
}

static void make_current(struct sw *sw, struct sw_entry *e)
{
	pthread_mutex_lock(&sw->lock);
	struct sw_entry *old = sw->current;
	if (e->resident)
		e->since = time(NULL);
	else if (e->id == 0)
		add_plugin(sw, e);
	sw->current = e;
	sw_pin(old);
	struct sw_entry *gone = sw_unpin(sw, old);
	pthread_mutex_unlock(&sw->lock);
	sw_reap(sw, gone);
}

/*
 * A plug-in's pointer inside memory of the caching allocator or of another
 * loaded plug-in (retired ones included) would let writes to the new
 * tensor overwrite one the plug-in does not own.
 */
static bool foreign_memory(void *arg, const struct npl *self, int device, const void *ptr,
			   size_t size, char *owner, size_t ownerlen)
{
	struct sw *sw = arg;

	if (npa_range_reserved(sw->npa, device, ptr, size)) {
		snprintf(owner, ownerlen, "the caching allocator");
		return true;
	}
	return sw_plugin_owner(sw, self, device, ptr, size, owner, ownerlen);
}

bool sw_plugin_owner(struct sw *sw, const struct npl *self, int device, const void *ptr,
		     size_t size, char *owner, size_t ownerlen)
{
	bool found = false;

	(void)device;
	pthread_mutex_lock(&sw->lock);
	for (struct sw_entry *e = sw->plugins; e != NULL && !found; e = e->next) {
		if (e->npl == self || !npl_range_live(e->npl, ptr, size))
			continue;
		snprintf(owner, ownerlen, "%s", e->name);
		found = true;
	}
	pthread_mutex_unlock(&sw->lock);
	return found;
}

/* A capture's or a MemPool's allocations would leave its private pool for
 * the plug-in, and a replay of the graph would write where the pool does
 * not own. (torch_npu refuses any swap once the allocator is in use.) */
static int refuse_while_routing(struct sw *sw, char *err, size_t errlen)
{
	int device = npa_routing_device(sw->npa);

	pthread_mutex_lock(&sw->lock);
	bool plugin_scopes = sw_plugin_routes(sw);
	pthread_mutex_unlock(&sw->lock);
	if (device < 0 && plugin_scopes) {
		snprintf(err, errlen, "the current plug-in routes allocations to a private pool "
			 "(a graph capture or a MemPool in use); switch once it ends");
		return -EBUSY;
	}
	if (device < 0)
		return 0;
	snprintf(err, errlen, "device%d routes allocations to a private pool (a graph capture "
		 "or a MemPool in use); switch once it ends", device);
	return -EBUSY;
}

static void plugin_warning(void *arg, const struct npl *self, const char *text)
{
	struct sw *sw = arg;
	char name[32] = "plugin";

	pthread_mutex_lock(&sw->lock);
	for (struct sw_entry *e = sw->plugins; e != NULL; e = e->next)
		if (e->npl == self)
			snprintf(name, sizeof(name), "%s", e->name);
	pthread_mutex_unlock(&sw->lock);
	if (sw->on_warn)
		sw->on_warn(sw->ctx, name, text);
}

/* What createCustomAllocator passes to a plug-in's init (flavor.h). */
static int init_arg(struct sw *sw)
{
	int32_t device = 0;

	if (!npa_get_flavor(sw->npa)->plugin_init_gets_current_device ||
	    aclrtGetDevice(&device) != ACL_SUCCESS)
		return 0;
	return device;
}

/* Swap lock held. A plug-in entry for `spec`, not yet listed. */
static int open_plugin(struct sw *sw, const char *spec, struct sw_entry **out, char *err,
		       size_t errlen)
{
	struct plugin *p = NULL;
	struct sw_entry *e = calloc(1, sizeof(*e));

	if (!e) {
		snprintf(err, errlen, "out of host memory");
		return -ENOMEM;
	}
	struct plugin_isolation iso = { sw->plugin_host, sw->plugin_timeout_ms, sw->plugin_blocks };
	int rc = 0;

	/* At the first load, not at creation: a daemon going to the
	 * background forks after creating the switch, and a thread does not
	 * survive a fork. */
	if (sw->plugin_host && !sw->reaper_on && (rc = sw_reaper_start(sw)) != 0) {
		snprintf(err, errlen, "cannot start the plug-in reaper: %s", strerror(-rc));
		free(e);
		return rc;
	}
	rc = plugin_open(spec, sw->plugin_dirs, sw->owner, init_arg(sw), &iso, &p, err, errlen);
	if (!rc && (rc = npl_create(p, sw->device_count, &e->npl)))
		snprintf(err, errlen, "cannot set up plug-in: %s", strerror(-rc));
	if (rc) {
		free(e);
		return rc;
	}
	e->a = npl_allocator(e->npl);
	e->since = p->loaded_at;
	npl_set_foreign_check(e->npl, foreign_memory, sw);
	npl_set_warn(e->npl, plugin_warning, sw);
	npl_set_fault_notify(e->npl, sw->fault_fd);
	*out = e;
	return 0;
}

int sw_set_plugin(struct sw *sw, const char *spec, char *err, size_t errlen)
{
	struct sw_entry *e = NULL;

	/* One load at a time, so ids follow the order of the writes. */
	pthread_mutex_lock(&sw->swap_lock);
	int rc = refuse_while_routing(sw, err, errlen);
	if (!rc)
		rc = open_plugin(sw, spec, &e, err, errlen);
	if (!rc)
		make_current(sw, e);
	pthread_mutex_unlock(&sw->swap_lock);
	return rc;
}

/* NPUPluggableAllocator(...) without change_current_allocator. */
static int load_plugin(struct sw *sw, const char *spec, char *err, size_t errlen)
{
	struct sw_entry *e = NULL;

	pthread_mutex_lock(&sw->swap_lock);
	int rc = open_plugin(sw, spec, &e, err, errlen);
	if (!rc) {
		pthread_mutex_lock(&sw->lock);
		e->kept = true;
		add_plugin(sw, e);
		pthread_mutex_unlock(&sw->lock);
	}
	pthread_mutex_unlock(&sw->swap_lock);
	return rc;
}

/* The load's keep ends; the plug-in goes once nothing else holds it. */
static int unload_plugin(struct sw *sw, const char *name, char *err, size_t errlen)
{
	struct sw_entry *e = sw_hold(sw, name);
	bool kept = false;

	if (e) {
		pthread_mutex_lock(&sw->lock);
		kept = e->kept;
		e->kept = false;
		pthread_mutex_unlock(&sw->lock);
		sw_release(sw, e);
	}
	if (!e)
		snprintf(err, errlen, "no loaded plug-in %s", name);
	else if (!kept)
		snprintf(err, errlen, "%s was not loaded with load (it was made current); "
			 "it goes when it is no longer current and owns no block", name);
	return !e ? -ENOENT : kept ? 0 : -EINVAL;
}

void sw_set_caching(struct sw *sw)
{
	pthread_mutex_lock(&sw->swap_lock);
	if (!sw_is_caching(sw))
		make_current(sw, &sw->caching);
	pthread_mutex_unlock(&sw->swap_lock);
}

int sw_device_count(const struct sw *sw)
{
	return sw->device_count;
}

bool sw_is_caching(struct sw *sw)
{
	pthread_mutex_lock(&sw->lock);
	bool caching = sw->current == &sw->caching;
	pthread_mutex_unlock(&sw->lock);
	return caching;
}

struct npa *sw_current_caching(struct sw *sw)
{
	return sw_is_caching(sw) ? sw->npa : NULL;
}

struct npa *sw_caching(struct sw *sw)
{
	return sw->npa;
}

struct npa_host *sw_host(struct sw *sw)
{
	return npa_host_of(sw->npa);
}

/* The word at s (n bytes) is `w`. */
static bool word_is(const char *s, size_t n, const char *w)
{
	return n == strlen(w) && strncmp(s, w, n) == 0;
}

int sw_write(struct sw *sw, const char *line, char *err, size_t errlen)
{
	const char *s = line + strspn(line, " \t");
	size_t n = strcspn(s, " \t\r\n");
	const char *rest = s + n + strspn(s + n, " \t\r\n");

	if (word_is(s, n, "caching") && !*rest) {
		sw_set_caching(sw);
		return 0;
	}
	if (word_is(s, n, "load"))
		return load_plugin(sw, rest, err, errlen);
	if (word_is(s, n, "unload")) {
		char name[32];
		size_t k = strcspn(rest, " \t\r\n");
		if (k == 0 || k >= sizeof(name) || rest[k + strspn(rest + k, " \t\r\n")]) {
			snprintf(err, errlen, "unload takes one name, pluginK");
			return -EINVAL;
		}
		snprintf(name, sizeof(name), "%.*s", (int)k, rest);
		return unload_plugin(sw, name, err, errlen);
	}
	return sw_set_plugin(sw, line, err, errlen);
}
