/*
 * pluggable_allocator.c - a plug-in's allocations, with the stats upstream
 * does not keep for it, and guards against its mistakes.
 *
 * Live blocks are in a hash by pointer (the lookup of every free) and in a
 * red-black tree by address (the neighbours an overlap check needs). One
 * lock covers both and the counters of every device: overlap is a
 * property of the whole address space, not of one device.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsd/sys/tree.h>

#include <acl/acl_rt.h>
#include <unistd.h>

#include "plugin_guard.h"
#include "plugin_host.h"
#include "alloc/core/stream_id.h"
#include "pluggable_allocator.h"

/* Pointers are at least 512-aligned here, so the low bits carry nothing. */
static inline unsigned npl_ptr_hash(const void *key)
{
	uint64_t p;

	memcpy(&p, key, sizeof(p));
	return (unsigned)(((p >> 9) * UINT64_C(0x9E3779B97F4A7C15)) >> 32);
}
#undef HASH_FUNCTION
#define HASH_FUNCTION(keyptr, keylen, hashv) ((hashv) = npl_ptr_hash(keyptr))
#include <uthash.h>

/* How an allocation's pointer is checked against other allocators. */
struct npl_check {
	npl_foreign_fn foreign;
	void *arg;
	bool lent;
};

struct npl_block {
	void *ptr;
	size_t size;
	int device;
	aclrtStream stream;
	uint64_t stream_id;
	bool lent;          /* a segment of a MemPool of the caching allocator */
	UT_hash_handle hh;
	RB_ENTRY(npl_block) by_addr;
};

static int block_cmp(const struct npl_block *x, const struct npl_block *y)
{
	uintptr_t a = (uintptr_t)x->ptr, b = (uintptr_t)y->ptr;
	return a < b ? -1 : a > b;
}

RB_HEAD(npl_tree, npl_block);
RB_PROTOTYPE(npl_tree, npl_block, by_addr, block_cmp)
RB_GENERATE(npl_tree, npl_block, by_addr, block_cmp)

struct npl {
	struct plugin *plugin;
	bool faulted;             /* atomic: retired by a fault, never called again */
	enum plugin_end end;      /* how, under lock once faulted */
	int fault_fd;             /* an eventfd told of a death no call saw, or -1 */
	char fault[PATH_MAX + 512]; /* what happened, under lock */
	int device_count;
	pthread_mutex_t lock;
	struct npl_block *by_ptr;
	struct npl_tree by_addr;
	struct npl_guard_counts guard;
	npl_foreign_fn foreign;
	void *foreign_arg;
	npl_warn_fn warn;
	void *warn_arg;
	bool warned[NPL_NWARNINGS]; /* under lock */
	double *fraction;
	struct npa_stats stats[];
};

static void retire(struct npl *a, enum plugin_fn fn, const struct plugin_fault *f);

/* The host ended while no call was in it (a thread of the plug-in's own,
 * say): retired as after a fault, and whoever listens is told. */
static void host_died(void *arg, enum plugin_fn where)
{
	struct npl *a = arg;
	struct plugin_fault f;
	uint64_t one = 1;

	if (!plugin_host_ended(a->plugin->host, &f))
		return;
	retire(a, where, &f);
	pthread_mutex_lock(&a->lock);
	int fd = a->fault_fd;
	pthread_mutex_unlock(&a->lock);
	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0)
		return;
}

int npl_create(struct plugin *p, int device_count, struct npl **out)
{
	if (device_count < 1) {
		plugin_close(p);
		return -EINVAL;
	}
	struct npl *a = calloc(1, sizeof(*a) + (size_t)device_count * sizeof(a->stats[0]));
	double *fraction = calloc((size_t)device_count, sizeof(*fraction));
	if (!a || !fraction) {
		free(a);
		free(fraction);
		plugin_close(p);
		return -ENOMEM;
	}
	a->plugin = p;
	a->device_count = device_count;
	a->fraction = fraction;
	for (int i = 0; i < device_count; i++)
		fraction[i] = 1.0;
	a->fault_fd = -1;
	pthread_mutex_init(&a->lock, NULL);
	RB_INIT(&a->by_addr);
	plugin_guard_install();
	if (p->host)
		plugin_host_set_on_death(p->host, host_died, a);
	*out = a;
	return 0;
}

void npl_set_fault_notify(struct npl *a, int fd)
{
	pthread_mutex_lock(&a->lock);
	a->fault_fd = fd;
	pthread_mutex_unlock(&a->lock);
}

static const char *const warning_texts[NPL_NWARNINGS] = {
	[NPL_WARN_GET_DEVICE_STATS] =
		"get_device_stats_fn_ is not define, please set by set_get_device_stats_fn",
	[NPL_WARN_RESET_PEAK_STATUS] =
		"reset_peak_status_fn_ is not define, please set by set_reset_peak_status_fn",
	[NPL_WARN_RESET_ACCUMULATED] =
		"NPUPluggableAllocator does not yet support resetAccumulatedStats. "
		"If you need it, please file an issue describing your use case.",
	[NPL_WARN_SNAPSHOT] =
		"NPUPluggableAllocator does not yet support snapshot. "
		"If you need it, please file an issue describing your use case.",
	/* torch_npu v2.6.0's words for the pool calls, from before the hooks
	 * existed; with a hook missing nothing is called, as since. */
	[NPL_WARN_BEGIN_POOL] =
		"NPUPluggableAllocator does not yet support beginAllocateToPool. "
		"If you need it, please file an issue describing your use case.",
	[NPL_WARN_END_POOL] =
		"NPUPluggableAllocator does not yet support endAllocateToPool. "
		"If you need it, please file an issue describing your use case.",
	[NPL_WARN_RELEASE_POOL] =
		"NPUPluggableAllocator does not yet support releasePool. "
		"If you need it, please file an issue describing your use case.",
};

const char *npl_warning_text(enum npl_warning w)
{
	return (unsigned)w < NPL_NWARNINGS ? warning_texts[w] : "?";
}

void npl_set_warn(struct npl *a, npl_warn_fn fn, void *arg)
{
	a->warn = fn;
	a->warn_arg = arg;
}

static void warn_once(struct npl *a, enum npl_warning w)
{
	pthread_mutex_lock(&a->lock);
	bool first = !a->warned[w];
	a->warned[w] = true;
	pthread_mutex_unlock(&a->lock);
	if (first && a->warn)
		a->warn(a->warn_arg, a, warning_texts[w]);
}

static void retire(struct npl *a, enum plugin_fn fn, const struct plugin_fault *f)
{
	char what[192];

	plugin_fault_text(f, what, sizeof(what));
	pthread_mutex_lock(&a->lock);
	if (!a->faulted)
		a->end = f->end;
	if (!a->faulted)
		snprintf(a->fault, sizeof(a->fault),
			 "plug-in %s faulted in %s: %s; retired, never called again; its %llu "
			 "live blocks (%llu bytes) are lost",
			 a->plugin->path, plugin_call_symbol(a->plugin, fn), what,
			 (unsigned long long)a->guard.live_blocks,
			 (unsigned long long)a->guard.live_bytes);
	__atomic_store_n(&a->faulted, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&a->lock);
}

/* 0, -EIO when retired already, -EFAULT when this call faulted. */
static int call(struct npl *a, struct plugin_call *c)
{
	struct plugin_fault f;
	int rc;

	if (__atomic_load_n(&a->faulted, __ATOMIC_ACQUIRE))
		return -EIO;
	rc = plugin_exec(a->plugin, c, &f);
	if (rc == -EFAULT)
		retire(a, c->fn, &f);
	return rc == -EFAULT || rc == 0 ? rc : -EIO;
}

bool npl_fault(struct npl *a, char *buf, size_t len)
{
	if (!__atomic_load_n(&a->faulted, __ATOMIC_ACQUIRE))
		return false;
	pthread_mutex_lock(&a->lock);
	snprintf(buf, len, "%s", a->fault);
	pthread_mutex_unlock(&a->lock);
	return true;
}

static void give_back(struct npl *a, void *ptr, size_t size, int device, aclrtStream stream)
{
	struct plugin_call c = { .fn = PLUGIN_FN_FREE, .ptr = ptr, .size = (ssize_t)size,
			      .device = device, .stream = stream };

	call(a, &c);
}

void npl_set_foreign_check(struct npl *a, npl_foreign_fn fn, void *arg)
{
	a->foreign = fn;
	a->foreign_arg = arg;
}

size_t npl_destroy(struct npl *a)
{
	struct npl_block *b, *tmp;
	size_t live = 0;

	if (!a)
		return 0;
	HASH_ITER(hh, a->by_ptr, b, tmp) {
		HASH_DEL(a->by_ptr, b);
		give_back(a, b->ptr, b->size, b->device, b->stream);
		free(b);
		live++;
	}
	/* A faulted plug-in's destructors may fault too: it stays mapped. */
	if (__atomic_load_n(&a->faulted, __ATOMIC_ACQUIRE))
		plugin_abandon(a->plugin);
	else
		plugin_close(a->plugin);
	pthread_mutex_destroy(&a->lock);
	free(a->fraction);
	free(a);
	return live;
}

const struct plugin *npl_plugin(const struct npl *a)
{
	return a->plugin;
}

static bool valid_device(const struct npl *a, int device)
{
	return device >= 0 && device < a->device_count;
}

/*
 * Every block here is one segment holding one active block of exactly the
 * request: each stat moves by one block, in both the "all" and its pool's row.
 */
static void count_block(struct npa_stats *s, size_t size,
			void (*step)(struct npa_stat *, int64_t))
{
	int pool = size <= NPL_SMALL_SIZE ? NPA_STAT_SMALL_POOL : NPA_STAT_LARGE_POOL;
	int types[2] = { NPA_STAT_ALL, pool };

	for (int i = 0; i < 2; i++) {
		int t = types[i];
		step(&s->allocation[t], 1);
		step(&s->segment[t], 1);
		step(&s->active[t], 1);
		step(&s->allocated_bytes[t], (int64_t)size);
		step(&s->reserved_bytes[t], (int64_t)size);
		step(&s->active_bytes[t], (int64_t)size);
		step(&s->requested_bytes[t], (int64_t)size);
	}
}

static void count_alloc(struct npa_stats *s, size_t size)
{
	count_block(s, size, npa_stat_increase);
	s->num_device_alloc++;
}

static void count_free(struct npa_stats *s, size_t size)
{
	count_block(s, size, npa_stat_decrease);
	s->num_device_free++;
}

/* A live block sharing a byte with [p, p + size), or NULL. Lock held. */
static struct npl_block *find_overlap(struct npl *a, const struct npl_block *nb)
{
	uintptr_t lo = (uintptr_t)nb->ptr, hi = lo + nb->size;
	struct npl_block *next = RB_NFIND(npl_tree, &a->by_addr, (struct npl_block *)nb);
	struct npl_block *prev = next ? RB_PREV(npl_tree, &a->by_addr, next)
				      : RB_MAX(npl_tree, &a->by_addr);

	if (next && (uintptr_t)next->ptr < hi)
		return next;
	if (prev && (uintptr_t)prev->ptr + prev->size > lo)
		return prev;
	return NULL;
}

static int refuse(struct npl *a, struct npl_block *nb, uint64_t *counter,
		  int rc)
{
	pthread_mutex_lock(&a->lock);
	(*counter)++;
	pthread_mutex_unlock(&a->lock);
	give_back(a, nb->ptr, nb->size, nb->device, nb->stream);
	free(nb);
	return rc;
}

static int plugin_returned_null(struct npl *a, int device, size_t size,
				char *err, size_t errlen)
{
	pthread_mutex_lock(&a->lock);
	a->guard.null_returns++;
	a->stats[device].num_ooms++;
	pthread_mutex_unlock(&a->lock);
	snprintf(err, errlen,
		 "NPU out of memory. Plug-in allocator %s (%s) returned NULL "
		 "for %zu bytes on device %d",
		 a->plugin->path, a->plugin->alloc_name, size, device);
	return -ENOMEM;
}

static int npl_block_ranges(void *self, int device, struct npa_range **out, size_t *n)
{
	struct npl *a = self;
	struct npl_block *b;
	size_t count = 0;

	*n = 0;
	pthread_mutex_lock(&a->lock);
	/* A lent block is the caching allocator's segment now, listed there. */
	RB_FOREACH(b, npl_tree, &a->by_addr)
		count += b->device == device && !b->lent;
	*out = count ? malloc(count * sizeof(**out)) : NULL;
	if (*out != NULL)
		RB_FOREACH(b, npl_tree, &a->by_addr)
			if (b->device == device && !b->lent)
				(*out)[(*n)++] = (struct npa_range){ (uintptr_t)b->ptr,
								     (uintptr_t)b->ptr + b->size };
	pthread_mutex_unlock(&a->lock);
	return count == 0 || *out != NULL ? 0 : -ENOMEM;
}

bool npl_range_live(struct npl *a, const void *ptr, size_t size)
{
	struct npl_block probe = { .ptr = (void *)ptr, .size = size };

	pthread_mutex_lock(&a->lock);
	bool live = size > 0 && find_overlap(a, &probe) != NULL;
	pthread_mutex_unlock(&a->lock);
	return live;
}

/*
 * Memory another allocator holds is not the plug-in's to hand out, nor to
 * take back: its free could release that allocator's segment. So the
 * pointer is not given back, only refused and counted.
 */
static int refuse_foreign(struct npl *a, struct npl_block *nb, const struct npl_check *chk,
			  char *err, size_t errlen)
{
	char owner[64] = "another allocator";

	if (!chk->foreign || !chk->foreign(chk->arg, a, nb->device, nb->ptr, nb->size,
					   owner, sizeof(owner)))
		return 0;
	pthread_mutex_lock(&a->lock);
	a->guard.refused_overlap++;
	pthread_mutex_unlock(&a->lock);
	snprintf(err, errlen,
		 "plug-in %s returned %p for %zu bytes, inside memory of %s: not given "
		 "back, allocation refused",
		 a->plugin->alloc_name, nb->ptr, nb->size, owner);
	free(nb);
	return -EFAULT;
}

/*
 * Whether [ptr, ptr + size) is device memory the runtime holds now, of
 * `device`, in blocks or mappings that follow one another. A pointer the
 * plug-in already gave back with aclrtFree would make a tensor whose every
 * copy the runtime refuses. Host memory passes here: the runtime itself
 * refuses its copies, and the log says why (tensor_store.c).
 */
static bool live_device_memory(void *ptr, size_t size, int device, char *why, size_t whylen)
{
	aclrtPtrAttributes attr;
	char *p = ptr, *end = p + size;

	if (aclrtPointerGetAttributes(ptr, &attr) != ACL_SUCCESS) {
		snprintf(why, whylen, "device memory no live block holds (freed or unmapped)");
		return false;
	}
	if (attr.location.type != ACL_MEM_LOCATION_TYPE_DEVICE)
		return true;
	if (attr.location.id != (uint32_t)device) {
		snprintf(why, whylen, "memory of device %u, not of device %d",
			 attr.location.id, device);
		return false;
	}
	while (p < end) {
		void *base;
		size_t len;

		if (aclrtMemGetAddressRange(p, &base, &len) != ACL_SUCCESS) {
			snprintf(why, whylen, "only its first %zu bytes are live device memory",
				 (size_t)(p - (char *)ptr));
			return false;
		}
		p = (char *)base + len;
	}
	return true;
}

static int check_and_insert(struct npl *a, struct npl_block *nb,
			    const struct npl_check *chk, char *err, size_t errlen)
{
	int rc = refuse_foreign(a, nb, chk, err, errlen);

	if (rc)
		return rc;
	if ((uintptr_t)nb->ptr % NPL_ALIGNMENT) {
		snprintf(err, errlen,
			 "plug-in %s returned %p for %zu bytes, not %d-byte "
			 "aligned: given back, allocation refused",
			 a->plugin->alloc_name, nb->ptr, nb->size, NPL_ALIGNMENT);
		return refuse(a, nb, &a->guard.refused_unaligned, -EFAULT);
	}
	char why[96];
	if (!live_device_memory(nb->ptr, nb->size, nb->device, why, sizeof(why))) {
		snprintf(err, errlen,
			 "plug-in %s returned %p for %zu bytes on device %d, %s: given "
			 "back, allocation refused",
			 a->plugin->alloc_name, nb->ptr, nb->size, nb->device, why);
		return refuse(a, nb, &a->guard.refused_not_device, -EFAULT);
	}
	pthread_mutex_lock(&a->lock);
	struct npl_block *old = find_overlap(a, nb);
	if (old && old->ptr == nb->ptr) {
		/* Giving it back would free the live block at that address. */
		a->guard.refused_overlap++;
		size_t old_size = old->size;
		pthread_mutex_unlock(&a->lock);
		snprintf(err, errlen,
			 "plug-in %s returned %p for %zu bytes, the address of live "
			 "block %p of %zu bytes (overlapping live block): not given "
			 "back, allocation refused",
			 a->plugin->alloc_name, nb->ptr, nb->size, nb->ptr, old_size);
		free(nb);
		return -EFAULT;
	}
	if (old) {
		void *old_ptr = old->ptr;
		size_t old_size = old->size;
		pthread_mutex_unlock(&a->lock);
		snprintf(err, errlen,
			 "plug-in %s returned %p for %zu bytes, overlapping live "
			 "block %p of %zu bytes: given back, allocation refused",
			 a->plugin->alloc_name, nb->ptr, nb->size, old_ptr, old_size);
		return refuse(a, nb, &a->guard.refused_overlap, -EFAULT);
	}
	HASH_ADD(hh, a->by_ptr, ptr, sizeof(nb->ptr), nb);
	RB_INSERT(npl_tree, &a->by_addr, nb);
	count_alloc(&a->stats[nb->device], nb->size);
	a->guard.live_blocks++;
	a->guard.live_bytes += nb->size;
	if (nb->lent) {
		a->guard.lent_blocks++;
		a->guard.lent_bytes += nb->size;
	}
	pthread_mutex_unlock(&a->lock);
	return 0;
}

static int alloc_checked(struct npl *a, int device, size_t size, aclrtStream stream,
			 void **ptr, const struct npl_check *chk, char *err, size_t errlen)
{
	*ptr = NULL;
	if (!valid_device(a, device)) {
		snprintf(err, errlen, "invalid device %d (%d devices)", device,
			 a->device_count);
		return -EINVAL;
	}
	if (size == 0)
		return 0;
	if (size > (size_t)SSIZE_MAX)
		return plugin_returned_null(a, device, size, err, errlen);

	/* What the caller's device guard does upstream: torch_npu's example
	 * plug-in allocates on the current device and ignores `device`. */
	aclError acl = aclrtSetDevice(device);
	if (acl != ACL_SUCCESS) {
		snprintf(err, errlen, "cannot make device %d current (ACL error %d)",
			 device, acl);
		return -EINVAL;
	}
	struct npl_block *nb = calloc(1, sizeof(*nb));
	if (!nb) {
		snprintf(err, errlen, "out of host memory");
		return -ENOMEM;
	}
	nb->size = size;
	nb->device = device;
	nb->stream = stream;
	nb->stream_id = npa_stream_id(stream);
	nb->lent = chk->lent;
	struct plugin_call c = { .fn = PLUGIN_FN_ALLOC, .size = (ssize_t)size, .device = device,
			      .stream = stream };
	int called = call(a, &c);
	if (called) {
		free(nb);
		npl_fault(a, err, errlen);
		/* A call that never came back is an allocation that failed. */
		return called == -EFAULT && a->end == PLUGIN_END_TIMEOUT ? -ENOMEM : called;
	}
	nb->ptr = c.ret;
	if (!nb->ptr) {
		free(nb);
		return plugin_returned_null(a, device, size, err, errlen);
	}
	int rc = check_and_insert(a, nb, chk, err, errlen);
	if (!rc)
		*ptr = nb->ptr;
	return rc;
}

static int npl_malloc(void *self, int device, size_t size, aclrtStream stream,
	       void **ptr, char *err, size_t errlen)
{
	struct npl *a = self;
	struct npl_check chk = { a->foreign, a->foreign_arg, false };

	return alloc_checked(a, device, size, stream, ptr, &chk, err, errlen);
}

int npl_lend(struct npl *a, int device, size_t size, aclrtStream stream, void **ptr,
	     npl_foreign_fn foreign, void *arg, char *err, size_t errlen)
{
	struct npl_check chk = { foreign, arg, true };

	return alloc_checked(a, device, size, stream, ptr, &chk, err, errlen);
}

static struct npl_block *find_block(struct npl *a, const void *ptr)
{
	struct npl_block *b = NULL;

	HASH_FIND(hh, a->by_ptr, &ptr, sizeof(ptr), b);
	return b;
}

/* Unlink a live block and count it gone; NULL if `ptr` is not one. */
static struct npl_block *take_block(struct npl *a, const void *ptr)
{
	struct npl_block *b = find_block(a, ptr);

	if (!b)
		return NULL;
	HASH_DEL(a->by_ptr, b);
	RB_REMOVE(npl_tree, &a->by_addr, b);
	count_free(&a->stats[b->device], b->size);
	a->guard.live_blocks--;
	a->guard.live_bytes -= b->size;
	if (b->lent) {
		a->guard.lent_blocks--;
		a->guard.lent_bytes -= b->size;
	}
	return b;
}

void npl_forget(struct npl *a, void *ptr)
{
	pthread_mutex_lock(&a->lock);
	struct npl_block *b = take_block(a, ptr);
	if (b)
		a->guard.refused_overlap++;
	pthread_mutex_unlock(&a->lock);
	free(b);
}

static int npl_free(void *self, void *ptr, char *err, size_t errlen)
{
	struct npl *a = self;

	if (!ptr)
		return 0;
	pthread_mutex_lock(&a->lock);
	struct npl_block *b = take_block(a, ptr);
	if (!b) {
		a->guard.refused_frees++;
		pthread_mutex_unlock(&a->lock);
		snprintf(err, errlen, "Trying to free a pointer not allocated here");
		return -EINVAL;
	}
	pthread_mutex_unlock(&a->lock);

	struct plugin_call c = { .fn = PLUGIN_FN_FREE, .ptr = b->ptr, .size = (ssize_t)b->size,
			      .device = b->device, .stream = b->stream };
	free(b);
	/* A retired plug-in's block is lost, not given back: the daemon's
	 * accounting of it ends here all the same. */
	if (call(a, &c) == -EFAULT) {
		npl_fault(a, err, errlen);
		return -EFAULT;
	}
	return 0;
}

/* A stream hook on a live pointer; nothing without the hook, as upstream. */
static int stream_hook(struct npl *a, enum plugin_fn fn, bool hooked, void *ptr,
		       aclrtStream stream)
{
	pthread_mutex_lock(&a->lock);
	bool live = find_block(a, ptr) != NULL;
	pthread_mutex_unlock(&a->lock);
	if (!live)
		return -EINVAL;
	struct plugin_call c = { .fn = fn, .ptr = ptr, .stream = stream };
	return hooked ? call(a, &c) : 0;
}

static int npl_record_stream(void *self, void *ptr, aclrtStream stream)
{
	struct npl *a = self;

	return stream_hook(a, PLUGIN_FN_RECORD_STREAM, plugin_has_hook(a->plugin, PLUGIN_HOOK_record_stream), ptr, stream);
}

static int npl_erase_stream(void *self, void *ptr, aclrtStream stream)
{
	struct npl *a = self;

	return stream_hook(a, PLUGIN_FN_ERASE_STREAM, plugin_has_hook(a->plugin, PLUGIN_HOOK_erase_stream), ptr, stream);
}

static size_t npl_block_size(void *self, const void *ptr)
{
	struct npl *a = self;

	pthread_mutex_lock(&a->lock);
	struct npl_block *b = find_block(a, ptr);
	size_t size = b ? b->size : 0;
	pthread_mutex_unlock(&a->lock);
	return size;
}

void *npl_base_allocation(struct npl *a, void *ptr, size_t *size)
{
	struct plugin_call c = { .fn = PLUGIN_FN_BASE_ALLOC, .ptr = ptr, .size_out = *size };

	if (plugin_has_hook(a->plugin, PLUGIN_HOOK_base_alloc)) {
		if (call(a, &c) != 0)
			return NULL;
		*size = c.size_out;
		return c.ret;
	}
	*size = npl_block_size(a, ptr);
	return ptr;
}

static int npl_empty_cache(void *self, int device)
{
	struct npl *a = self;

	if (device != -1 && !valid_device(a, device))
		return -EINVAL;
	struct plugin_call c = { .fn = PLUGIN_FN_RESET };
	return plugin_has_hook(a->plugin, PLUGIN_HOOK_reset) ? call(a, &c) : 0;
}

/* A hook's failure with what happened in err: the plug-in faulted now
 * (-EFAULT) or earlier (-EIO, it is never called again). */
static int told(struct npl *a, int rc, char *err, size_t errlen)
{
	if (rc != 0 && !npl_fault(a, err, errlen))
		snprintf(err, errlen, "plug-in call failed: %s", strerror(-rc));
	return rc;
}

static int npl_set_memory_fraction(void *self, int device, double fraction,
			    char *err, size_t errlen)
{
	struct npl *a = self;

	if (!valid_device(a, device)) {
		snprintf(err, errlen, "invalid device %d", device);
		return -EINVAL;
	}
	if (!(fraction >= 0.0 && fraction <= 1.0)) {
		snprintf(err, errlen, "Invalid fraction value: %g. Allowed range: 0~1",
			 fraction);
		return -EINVAL;
	}
	pthread_mutex_lock(&a->lock);
	a->fraction[device] = fraction;
	pthread_mutex_unlock(&a->lock);
	struct plugin_call c = { .fn = PLUGIN_FN_MEMORY_FRACTION, .fraction = fraction, .device = device };
	return plugin_has_hook(a->plugin, PLUGIN_HOOK_memory_fraction) ? told(a, call(a, &c), err, errlen) : 0;
}

static double npl_get_memory_fraction(void *self, int device)
{
	struct npl *a = self;

	if (!valid_device(a, device))
		return 0.0;
	pthread_mutex_lock(&a->lock);
	double f = a->fraction[device];
	pthread_mutex_unlock(&a->lock);
	return f;
}

static void reset_stats(struct npa_stats *s, void (*reset)(struct npa_stat *))
{
	for (int t = 0; t < NPA_STAT_TYPES; t++) {
#define NPA_X(name) reset(&s->name[t]);
		NPA_STAT_ARRAYS(NPA_X)
#undef NPA_X
	}
#define NPA_X(name) reset(&s->name);
	NPA_STAT_SINGLES(NPA_X)
#undef NPA_X
}

static int reset_devices(struct npl *a, int device,
			 void (*reset)(struct npa_stat *), bool counters)
{
	if (device != -1 && !valid_device(a, device))
		return -EINVAL;
	pthread_mutex_lock(&a->lock);
	for (int d = 0; d < a->device_count; d++) {
		if (device != -1 && d != device)
			continue;
		reset_stats(&a->stats[d], reset);
		/* upstream resetAccumulatedStats also zeroes these counters. */
		if (counters) {
			a->stats[d].num_alloc_retries = 0;
			a->stats[d].num_ooms = 0;
			a->stats[d].num_sync_all_streams = 0;
			a->stats[d].num_device_alloc = 0;
			a->stats[d].num_device_free = 0;
		}
	}
	pthread_mutex_unlock(&a->lock);
	return 0;
}

/* upstream resetPeakStats(device): the hook once per device asked for. */
static int reset_peak_status(struct npl *a, int device)
{
	int rc = 0;

	if (!plugin_has_hook(a->plugin, PLUGIN_HOOK_reset_peak_status)) {
		warn_once(a, NPL_WARN_RESET_PEAK_STATUS);
		return 0;
	}
	for (int d = 0; d < a->device_count && !rc; d++) {
		struct plugin_call c = { .fn = PLUGIN_FN_RESET_PEAK_STATUS, .device = d };
		if (device == -1 || d == device)
			rc = call(a, &c);
	}
	return rc;
}

static int npl_reset_peak_stats(void *self, int device)
{
	struct npl *a = self;
	int rc = reset_devices(a, device, npa_stat_reset_peak, false);

	return rc ? rc : reset_peak_status(a, device);
}

static int npl_reset_accumulated_stats(void *self, int device)
{
	struct npl *a = self;
	int rc = reset_devices(a, device, npa_stat_reset_accumulated, true);

	if (!rc)
		warn_once(a, NPL_WARN_RESET_ACCUMULATED);
	return rc;
}

static struct npumemfs_mempool_id abi_id(struct npa_pool_id id)
{
	return (struct npumemfs_mempool_id){ id.first, id.second };
}

/* The pool hooks cannot refuse (upstream's are void): only a fault fails
 * them. A missing one is warned of once and the call does nothing. */
static int pool_call(struct npl *a, bool hooked, struct plugin_call *c,
		     enum npl_warning missing, char *err, size_t errlen)
{
	if (hooked)
		return told(a, call(a, c), err, errlen);
	warn_once(a, missing);
	return 0;
}

static int npl_begin_allocate_to_pool(void *self, int device, struct npa_pool_id id,
				      npa_pool_filter filter, void *arg, char *err, size_t errlen)
{
	struct npl *a = self;
	struct plugin_call c = { .fn = PLUGIN_FN_BEGIN_POOL, .device = device, .pool = abi_id(id),
			      .filter = filter, .arg = arg };

	return pool_call(a, plugin_has_hook(a->plugin, PLUGIN_HOOK_begin_allocate_to_pool), &c, NPL_WARN_BEGIN_POOL,
			 err, errlen);
}

static int npl_end_allocate_to_pool(void *self, int device, struct npa_pool_id id, char *err,
				    size_t errlen)
{
	struct npl *a = self;
	struct plugin_call c = { .fn = PLUGIN_FN_END_POOL, .device = device, .pool = abi_id(id) };

	return pool_call(a, plugin_has_hook(a->plugin, PLUGIN_HOOK_end_allocate_to_pool), &c, NPL_WARN_END_POOL,
			 err, errlen);
}

static int npl_release_pool(void *self, int device, struct npa_pool_id id, char *err,
			    size_t errlen)
{
	struct npl *a = self;
	struct plugin_call c = { .fn = PLUGIN_FN_RELEASE_POOL, .device = device, .pool = abi_id(id) };

	return pool_call(a, plugin_has_hook(a->plugin, PLUGIN_HOOK_release_pool), &c, NPL_WARN_RELEASE_POOL,
			 err, errlen);
}

static int npl_device_count(void *self)
{
	const struct npl *a = self;

	return a->device_count;
}

int npl_get_own_stats(struct npl *a, int device, struct npa_stats *out)
{
	if (!valid_device(a, device))
		return -EINVAL;
	pthread_mutex_lock(&a->lock);
	*out = a->stats[device];
	pthread_mutex_unlock(&a->lock);
	return 0;
}

static int npl_get_stats(void *self, int device, struct npa_stats *out)
{
	struct npl *a = self;
	struct plugin_call c = { .fn = PLUGIN_FN_GET_DEVICE_STATS, .device = device };

	if (!valid_device(a, device))
		return -EINVAL;
	if (!plugin_has_hook(a->plugin, PLUGIN_HOOK_get_device_stats) ||
	    __atomic_load_n(&a->faulted, __ATOMIC_ACQUIRE)) {
		if (!plugin_has_hook(a->plugin, PLUGIN_HOOK_get_device_stats))
			warn_once(a, NPL_WARN_GET_DEVICE_STATS);
		return npl_get_own_stats(a, device, out);
	}
	int rc = call(a, &c);
	if (rc)
		return rc;
	npl_stats_from_abi(out, &c.stats);
	return 0;
}

void npl_guard_counts(struct npl *a, struct npl_guard_counts *out)
{
	pthread_mutex_lock(&a->lock);
	*out = a->guard;
	pthread_mutex_unlock(&a->lock);
}

static void block_segment(const struct npl_block *b, struct npa_segment_info *seg,
			  struct npa_block_info *info)
{
	*info = (struct npa_block_info){
		.address = (uint64_t)(uintptr_t)b->ptr,
		.size = b->size,
		.requested_size = b->size,
		.state = NPA_BLOCK_ACTIVE_ALLOCATED,
	};
	*seg = (struct npa_segment_info){
		.device = b->device,
		.address = info->address,
		.total_size = b->size,
		.allocated_size = b->size,
		.active_size = b->size,
		.requested_size = b->size,
		.stream = b->stream_id,
		.is_large = b->size > NPL_SMALL_SIZE,
		.nblocks = 1,
		.blocks = info,
	};
}

static int segment_cmp(const void *x, const void *y)
{
	const struct npa_segment_info *a = x, *b = y;

	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	return a->address < b->address ? -1 : a->address > b->address;
}

/* Lock held. Walks in address order, so one device comes out sorted. */
static int copy_segments(struct npl *a, int device, struct npa_snapshot *out)
{
	struct npl_block *b;
	size_t n = 0;

	RB_FOREACH(b, npl_tree, &a->by_addr)
		n += device == -1 || b->device == device;
	if (n == 0)
		return 0;
	out->segments = calloc(n, sizeof(*out->segments));
	if (!out->segments)
		return -ENOMEM;
	RB_FOREACH(b, npl_tree, &a->by_addr) {
		if (device != -1 && b->device != device)
			continue;
		struct npa_block_info *info = malloc(sizeof(*info));
		if (!info)
			return -ENOMEM;
		block_segment(b, &out->segments[out->nsegments++], info);
	}
	return 0;
}

static int npl_snapshot(void *self, int device, struct npa_snapshot *out)
{
	struct npl *a = self;

	memset(out, 0, sizeof(*out));
	if (device != -1 && !valid_device(a, device))
		return -EINVAL;
	warn_once(a, NPL_WARN_SNAPSHOT);
	pthread_mutex_lock(&a->lock);
	int rc = copy_segments(a, device, out);
	pthread_mutex_unlock(&a->lock);
	if (rc) {
		npa_snapshot_release(out);
		return rc;
	}
	if (device == -1)
		qsort(out->segments, out->nsegments, sizeof(*out->segments),
		      segment_cmp);
	return 0;
}

static bool npl_faulted(void *self, char *buf, size_t len)
{
	return npl_fault(self, buf, len);
}

/* A plug-in has no graphs, MemPools or host allocator of its own. */
static struct npa *no_caching(void *self)
{
	(void)self;
	return NULL;
}

static struct npa_host *no_host(void *self)
{
	(void)self;
	return NULL;
}

const struct allocator_ops npl_ops = {
	.malloc = npl_malloc,
	.free = npl_free,
	.record_stream = npl_record_stream,
	.erase_stream = npl_erase_stream,
	.block_size = npl_block_size,
	.empty_cache = npl_empty_cache,
	.set_fraction = npl_set_memory_fraction,
	.get_fraction = npl_get_memory_fraction,
	.reset_peak = npl_reset_peak_stats,
	.reset_accumulated = npl_reset_accumulated_stats,
	.get_stats = npl_get_stats,
	.snapshot = npl_snapshot,
	.ranges = npl_block_ranges,
	.begin_allocate_to_pool = npl_begin_allocate_to_pool,
	.end_allocate_to_pool = npl_end_allocate_to_pool,
	.release_pool = npl_release_pool,
	.device_count = npl_device_count,
	.faulted = npl_faulted,
	.caching = no_caching,
	.builtin = no_caching,
	.host = no_host,
};

struct allocator npl_allocator(struct npl *p)
{
	return (struct allocator){ .ops = &npl_ops, .self = p };
}
