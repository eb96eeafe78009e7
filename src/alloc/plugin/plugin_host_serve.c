/*
 * plugin_host_serve.c - the ACL calls a plug-in host makes, answered by
 * the daemon's simulator after checking them.
 *
 * A host may free, unmap, destroy or copy into only what its own calls
 * created: otherwise one aclrtFree of a pointer it read from a log would
 * take another tensor's memory. Its streams' and events' handles, its
 * blocks and mappings are kept here for that; the device's own streams
 * may be used (recorded on, synchronised), never destroyed. A filter it
 * asks must be one it was given for a pool whose scope is open, and a
 * descriptor's functions are its own code: they run in the host, called
 * through the trampolines below.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <acl/acl_mdl.h>
#include <acl/acl_rt.h>
#include <acl/acl_rt_allocator.h>

#include "plugin_host_impl.h"
#include "plugin_loader.h"

#include <uthash.h>

enum owned_kind { OWN_DEVICE, OWN_HOST, OWN_PHYSICAL, OWN_RESERVED, OWN_MAPPED, OWN_STREAM,
		  OWN_EVENT, OWN_DESC, OWN_BLOCK };

struct ph_owned {
	uint64_t key;
	enum owned_kind kind;
	uint64_t size;
	unsigned more;   /* references beyond the first (an imported physical handle) */
	UT_hash_handle hh;
};

struct ph_filter {
	struct npumemfs_mempool_id pool;
	uint64_t filter, arg;
	struct ph_filter *next;
};

/* A descriptor of the host's: the object and functions are the host's
 * values; the device gets the trampolines and this struct as object. */
struct ph_desc {
	uint64_t desc;
	uint64_t obj;
	uint64_t fn[4];           /* enum pw_desc_fn */
	struct plugin_host *host;
	struct ph_desc *next;
};

/* A block a host's descriptor handed out, as the device sees it. */
struct ph_block {
	struct ph_desc *d;
	uint64_t block;
};

static void own(struct plugin_host *h, enum owned_kind kind, uint64_t key, uint64_t size)
{
	struct ph_owned *o = calloc(1, sizeof(*o));

	if (!o)
		return;
	o->key = key;
	o->kind = kind;
	o->size = size;
	pthread_mutex_lock(&h->lock);
	HASH_ADD(hh, h->owned, key, sizeof(o->key), o);
	pthread_mutex_unlock(&h->lock);
}

/* Whether the host owns key as kind; one reference taken if `take`, and
 * with the last the key leaves the table. */
static bool owns(struct plugin_host *h, enum owned_kind kind, uint64_t key, bool take)
{
	struct ph_owned *o;
	bool gone = false;

	pthread_mutex_lock(&h->lock);
	HASH_FIND(hh, h->owned, &key, sizeof(key), o);
	bool yes = o && o->kind == kind;
	if (yes && take && o->more)
		o->more--;
	else if (yes && take) {
		HASH_DEL(h->owned, o);
		gone = true;
	}
	pthread_mutex_unlock(&h->lock);
	if (gone)
		free(o);
	return yes;
}

/* One more reference to what the host owns as kind, if it does. */
static bool owns_again(struct plugin_host *h, enum owned_kind kind, uint64_t key)
{
	struct ph_owned *o;

	pthread_mutex_lock(&h->lock);
	HASH_FIND(hh, h->owned, &key, sizeof(key), o);
	bool yes = o && o->kind == kind;
	if (yes)
		o->more++;
	pthread_mutex_unlock(&h->lock);
	return yes;
}

/* [p, p + n) inside one of the host's things of the kinds in `kinds`. */
static bool owns_within(struct plugin_host *h, unsigned kinds, uint64_t p, uint64_t n)
{
	struct ph_owned *o, *tmp;
	bool yes = false;

	pthread_mutex_lock(&h->lock);
	HASH_ITER(hh, h->owned, o, tmp)
		if ((kinds & (1u << o->kind)) && p >= o->key && n <= o->size &&
		    p - o->key <= o->size - n)
			yes = true;
	pthread_mutex_unlock(&h->lock);
	return yes;
}

static bool owns_range(struct plugin_host *h, uint64_t p, uint64_t n)
{
	return owns_within(h, 1u << OWN_DEVICE | 1u << OWN_MAPPED, p, n);
}

#define P(x) ((void *)(uintptr_t)(x))
#define U(x) ((uint64_t)(uintptr_t)(x))

static aclError made(struct plugin_host *h, aclError rc, enum owned_kind kind, void *handle,
		     uint64_t size, struct pw_msg *m)
{
	if (rc == ACL_SUCCESS) {
		own(h, kind, U(handle), size);
		m->v[0] = U(handle);
	}
	return rc;
}

static aclError give_back(struct plugin_host *h, enum owned_kind kind, uint64_t key,
			  aclError (*fn)(void *))
{
	if (!owns(h, kind, key, true))
		return ACL_ERROR_INVALID_PARAM;
	return fn(P(key));
}

static aclError free_device(void *p) { return aclrtFree(p); }
static aclError free_host(void *p) { return aclrtFreeHost(p); }
static aclError free_physical(void *p) { return aclrtFreePhysical(p); }
static aclError release_reserved(void *p) { return aclrtReleaseMemAddress(p); }
static aclError unmap(void *p) { return aclrtUnmapMem(p); }
static aclError destroy_stream(void *p) { return aclrtDestroyStream(p); }
static aclError destroy_event(void *p) { return aclrtDestroyEvent(p); }

static aclError serve_memory(struct plugin_host *h, struct pw_msg *m)
{
	void *p = NULL;
	aclError rc;

	switch (m->op) {
	case PW_ACL_Malloc:
		rc = aclrtMalloc(&p, m->v[0], (aclrtMemMallocPolicy)m->v[1]);
		return made(h, rc, OWN_DEVICE, p, m->v[0], m);
	case PW_ACL_MallocAlign32:
		rc = aclrtMallocAlign32(&p, m->v[0], (aclrtMemMallocPolicy)m->v[1]);
		return made(h, rc, OWN_DEVICE, p, m->v[0], m);
	case PW_ACL_Free:
		return give_back(h, OWN_DEVICE, m->v[0], free_device);
	case PW_ACL_MallocHost:
		rc = aclrtMallocHost(&p, m->v[0]);
		return made(h, rc, OWN_HOST, p, m->v[0], m);
	case PW_ACL_FreeHost:
		return give_back(h, OWN_HOST, m->v[0], free_host);
	default:
		return ACL_ERROR_FEATURE_UNSUPPORTED;
	}
}

static aclError serve_vm(struct plugin_host *h, struct pw_msg *m)
{
	aclrtPhysicalMemProp prop;
	void *p = NULL;
	size_t g = 0;
	aclError rc;

	if ((m->op == PW_ACL_MallocPhysical || m->op == PW_ACL_MemGetAllocationGranularity) &&
	    m->len != sizeof(prop))
		return ACL_ERROR_INVALID_PARAM;
	memcpy(&prop, m->data, m->len == sizeof(prop) ? sizeof(prop) : 0);
	m->len = 0;
	switch (m->op) {
	case PW_ACL_MemGetAllocationGranularity:
		rc = aclrtMemGetAllocationGranularity(&prop, (aclrtMemGranularityOptions)m->v[0], &g);
		m->v[0] = g;
		return rc;
	case PW_ACL_ReserveMemAddress:
		rc = aclrtReserveMemAddress(&p, m->v[0], m->v[1], P(m->v[2]), m->v[3]);
		return made(h, rc, OWN_RESERVED, p, m->v[0], m);
	case PW_ACL_ReleaseMemAddress:
		return give_back(h, OWN_RESERVED, m->v[0], release_reserved);
	case PW_ACL_MallocPhysical:
		rc = aclrtMallocPhysical(&p, m->v[0], &prop, m->v[1]);
		return made(h, rc, OWN_PHYSICAL, p, m->v[0], m);
	case PW_ACL_FreePhysical:
		return give_back(h, OWN_PHYSICAL, m->v[0], free_physical);
	case PW_ACL_MapMem:
		/* Mapping is into a reservation of its own, of a handle of its own. */
		if (!owns(h, OWN_PHYSICAL, m->v[3], false) ||
		    !owns_within(h, 1u << OWN_RESERVED, m->v[0], m->v[1]))
			return ACL_ERROR_INVALID_PARAM;
		rc = aclrtMapMem(P(m->v[0]), m->v[1], m->v[2], P(m->v[3]), m->v[4]);
		if (rc == ACL_SUCCESS)
			own(h, OWN_MAPPED, m->v[0], m->v[1]);
		return rc;
	case PW_ACL_UnmapMem:
		return give_back(h, OWN_MAPPED, m->v[0], unmap);
	default:
		return ACL_ERROR_FEATURE_UNSUPPORTED;
	}
}

/* A stream capturing now records a copy to run at each replay; the host's
 * side of the bytes is a message that is gone by then. */
static bool capturing(aclrtStream stream)
{
	aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
	aclmdlRI model = NULL;

	return aclmdlRICaptureGetInfo(stream, &status, &model) == ACL_SUCCESS &&
	       status != ACL_MODEL_RI_CAPTURE_STATUS_NONE;
}

/* The host's side of the bytes is in the message; the device side must
 * be the host's own memory for the whole copy (v[6] bytes from here, of
 * which this message is the first v[3]). */
static aclError serve_copy(struct plugin_host *h, struct pw_msg *m)
{
	aclrtMemcpyKind kind = (aclrtMemcpyKind)m->v[4];
	uint64_t count = m->v[3], whole = m->v[6];
	bool dst_dev = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
	bool src_dev = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
	bool payload = !(dst_dev && src_dev);
	void *dst = dst_dev ? P(m->v[0]) : m->data;
	const void *src = src_dev ? P(m->v[2]) : m->data;
	aclError rc;

	if ((!dst_dev && !src_dev) || whole < count ||
	    (payload && (count > PW_MAX_DATA || (!src_dev && m->len != count))))
		return ACL_ERROR_INVALID_PARAM;
	if ((dst_dev && !owns_range(h, m->v[0], whole)) ||
	    (src_dev && !owns_range(h, m->v[2], whole)))
		return ACL_ERROR_INVALID_PARAM;
	if (payload && m->op == PW_ACL_MemcpyAsync && capturing(P(m->v[5])))
		return ACL_ERROR_RT_STREAM_CAPTURED;
	if (m->op == PW_ACL_MemcpyAsync)
		rc = aclrtMemcpyAsync(dst, dst_dev ? m->v[1] : count, src, count, kind,
				      P(m->v[5]));
	else
		rc = aclrtMemcpy(dst, dst_dev ? m->v[1] : count, src, count, kind);
	m->len = rc == ACL_SUCCESS && !dst_dev ? (uint32_t)count : 0;
	return rc;
}

static aclError serve_stream(struct plugin_host *h, struct pw_msg *m)
{
	aclrtEventRecordedStatus st;
	int32_t id = 0;
	void *p = NULL;
	aclError rc;

	switch (m->op) {
	case PW_ACL_CreateStream:
		rc = aclrtCreateStream(&p);
		return made(h, rc, OWN_STREAM, p, 0, m);
	case PW_ACL_CreateStreamWithConfig:
		rc = aclrtCreateStreamWithConfig(&p, (uint32_t)m->v[0], (uint32_t)m->v[1]);
		return made(h, rc, OWN_STREAM, p, 0, m);
	case PW_ACL_DestroyStream:
		return give_back(h, OWN_STREAM, m->v[0], destroy_stream);
	case PW_ACL_SynchronizeStream:
		return aclrtSynchronizeStream(P(m->v[0]));
	case PW_ACL_StreamGetId:
		rc = aclrtStreamGetId(P(m->v[0]), &id);
		m->v[0] = (uint64_t)(int64_t)id;
		return rc;
	case PW_ACL_CreateEvent:
		rc = aclrtCreateEvent(&p);
		return made(h, rc, OWN_EVENT, p, 0, m);
	case PW_ACL_RecordEvent:
		if (!owns(h, OWN_EVENT, m->v[0], false))
			return ACL_ERROR_INVALID_PARAM;
		return aclrtRecordEvent(P(m->v[0]), P(m->v[1]));
	case PW_ACL_QueryEventStatus:
		if (!owns(h, OWN_EVENT, m->v[0], false))
			return ACL_ERROR_INVALID_PARAM;
		rc = aclrtQueryEventStatus(P(m->v[0]), &st);
		m->v[0] = (uint64_t)st;
		return rc;
	case PW_ACL_SynchronizeEvent:
		if (!owns(h, OWN_EVENT, m->v[0], false))
			return ACL_ERROR_INVALID_PARAM;
		return aclrtSynchronizeEvent(P(m->v[0]));
	case PW_ACL_DestroyEvent:
		return give_back(h, OWN_EVENT, m->v[0], destroy_event);
	default:
		return ACL_ERROR_FEATURE_UNSUPPORTED;
	}
}

/* The entries fill the message: v[1] at most as many as fit, v[2] whether
 * the host's caller gave somewhere to put them (the simulator says which
 * is wrong first, a device or a null pointer). */
static aclError mem_usage(struct pw_msg *m)
{
	const uint64_t fits = PW_MEM_USAGE_FITS;
	aclrtMemUsageInfo *info = m->v[2] ? (aclrtMemUsageInfo *)(void *)m->data : NULL;
	size_t n = 0;
	aclError rc;

	if (m->v[0] > UINT32_MAX || m->v[1] > fits)
		return ACL_ERROR_INVALID_PARAM;
	rc = aclrtGetMemUsageInfo((uint32_t)m->v[0], info, m->v[1], info ? &n : NULL);
	m->v[0] = rc == ACL_SUCCESS && n <= m->v[1] ? n : 0;
	m->len = (uint32_t)(m->v[0] * sizeof(aclrtMemUsageInfo));
	return rc;
}

static aclError serve_device(struct pw_msg *m)
{
	int32_t dev = 0;
	uint32_t count = 0;
	size_t free_b = 0, total = 0;
	aclrtPtrAttributes attr;
	aclrtContext ctx = NULL;
	void *base = NULL;
	aclError rc;

	switch (m->op) {
	case PW_ACL_GetCurrentContext:
		rc = aclrtGetCurrentContext(&ctx);
		m->v[0] = U(ctx);
		return rc;
	case PW_ACL_SetCurrentContext:
		return aclrtSetCurrentContext(P(m->v[0]));
	case PW_ACL_GetMemUsageInfo:
		return mem_usage(m);
	case PW_ACL_SetDevice:
		return aclrtSetDevice((int32_t)m->v[0]);
	case PW_ACL_GetDevice:
		rc = aclrtGetDevice(&dev);
		m->v[0] = (uint64_t)(int64_t)dev;
		return rc;
	case PW_ACL_GetDeviceCount:
		rc = aclrtGetDeviceCount(&count);
		m->v[0] = count;
		return rc;
	case PW_ACL_SynchronizeDevice:
		return aclrtSynchronizeDevice();
	case PW_ACL_GetMemInfo:
		rc = aclrtGetMemInfo((aclrtMemAttr)m->v[0], &free_b, &total);
		m->v[0] = free_b;
		m->v[1] = total;
		return rc;
	case PW_ACL_PointerGetAttributes:
		rc = aclrtPointerGetAttributes(P(m->v[0]), &attr);
		memcpy(m->data, &attr, sizeof(attr));
		m->len = sizeof(attr);
		return rc;
	case PW_ACL_MemGetAddressRange:
		rc = aclrtMemGetAddressRange(P(m->v[0]), &base, &total);
		m->v[0] = U(base);
		m->v[1] = total;
		return rc;
	default:
		return ACL_ERROR_FEATURE_UNSUPPORTED;
	}
}

/* h->lock held. */
static struct ph_desc *desc_of(struct plugin_host *h, uint64_t desc)
{
	struct ph_desc *d = h->descs;

	while (d && d->desc != desc)
		d = d->next;
	return d;
}

/* An alloc or alloc_advise in the host: the block it gives, as the
 * device's block (NULL when it gave none or its host is gone). */
static void *host_block(struct ph_desc *d, struct pw_msg *m)
{
	struct ph_block *b = malloc(sizeof(*b));

	if (!b || ph_desc_call(d->host, m) != 0 || !m->v[0]) {
		free(b);
		return NULL;
	}
	*b = (struct ph_block){ d, m->v[0] };
	return b;
}

static void *tramp_alloc(aclrtAllocator obj, size_t size)
{
	struct ph_desc *d = obj;
	struct pw_msg m = { .kind = PW_DESC, .op = PW_DESC_ALLOC,
			    .v = { d->fn[PW_DESC_ALLOC], d->obj, size } };

	return host_block(d, &m);
}

static void tramp_free(aclrtAllocator obj, aclrtAllocatorBlock block)
{
	struct ph_desc *d = obj;
	struct ph_block *b = block;
	struct pw_msg m = { .kind = PW_DESC, .op = PW_DESC_FREE,
			    .v = { d->fn[PW_DESC_FREE], d->obj, b ? b->block : 0 } };

	if (b)
		ph_desc_call(d->host, &m);
	free(b);
}

static void *tramp_advise(aclrtAllocator obj, size_t size, aclrtAllocatorAddr addr)
{
	struct ph_desc *d = obj;
	struct pw_msg m = { .kind = PW_DESC, .op = PW_DESC_ALLOC_ADVISE,
			    .v = { d->fn[PW_DESC_ALLOC_ADVISE], d->obj, size, U(addr) } };

	return host_block(d, &m);
}

static void *tramp_addr(aclrtAllocatorBlock block)
{
	struct ph_block *b = block;
	struct pw_msg m = { .kind = PW_DESC, .op = PW_DESC_ADDR,
			    .v = { b ? b->d->fn[PW_DESC_ADDR] : 0, b ? b->block : 0 } };

	if (!b || ph_desc_call(b->d->host, &m) != 0)
		return NULL;
	return P(m.v[0]);
}

bool plugin_host_owns_function(struct plugin_host *h, const void *obj, const void *code)
{
	bool tramp = code == (const void *)tramp_alloc || code == (const void *)tramp_free ||
		     code == (const void *)tramp_advise || code == (const void *)tramp_addr;

	return tramp && obj && ((const struct ph_desc *)obj)->host == h;
}

/* What the device is told for the host's descriptor: its functions as
 * trampolines, this record as the object. */
static aclError set_desc(struct plugin_host *h, struct pw_msg *m, int fn)
{
	void *desc = P(m->v[0]);
	struct ph_desc *d;

	if (!owns(h, OWN_DESC, m->v[0], false))
		return ACL_ERROR_INVALID_PARAM;
	pthread_mutex_lock(&h->lock);
	d = desc_of(h, m->v[0]);
	if (!d && (d = calloc(1, sizeof(*d)))) {
		*d = (struct ph_desc){ .desc = m->v[0], .host = h, .next = h->descs };
		h->descs = d;
	}
	if (d && fn < 0)
		d->obj = m->v[1];
	else if (d)
		d->fn[fn] = m->v[1];
	pthread_mutex_unlock(&h->lock);
	if (!d)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	aclError rc = aclrtAllocatorSetObjToDesc(desc, d);
	if (rc != ACL_SUCCESS || fn < 0)
		return rc;
	switch (fn) {
	case PW_DESC_ALLOC:
		return aclrtAllocatorSetAllocFuncToDesc(desc, m->v[1] ? tramp_alloc : NULL);
	case PW_DESC_FREE:
		return aclrtAllocatorSetFreeFuncToDesc(desc, m->v[1] ? tramp_free : NULL);
	case PW_DESC_ALLOC_ADVISE:
		return aclrtAllocatorSetAllocAdviseFuncToDesc(desc, m->v[1] ? tramp_advise : NULL);
	default:
		return aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc, m->v[1] ? tramp_addr : NULL);
	}
}

static aclError get_by_stream(struct plugin_host *h, struct pw_msg *m)
{
	aclrtAllocatorDesc desc = NULL;
	aclrtAllocator obj = NULL;
	aclError rc = aclrtAllocatorGetByStream(P(m->v[0]), &desc, &obj, NULL, NULL, NULL, NULL);
	struct ph_desc *d;

	memset(m->v, 0, sizeof(m->v));
	if (rc != ACL_SUCCESS)
		return rc;
	m->v[0] = U(desc);
	pthread_mutex_lock(&h->lock);
	d = desc_of(h, U(desc));
	if (d && obj == d) {
		m->v[1] = d->obj;
		memcpy(&m->v[2], d->fn, sizeof(d->fn));
	}
	pthread_mutex_unlock(&h->lock);
	return rc;
}

/* A stream's registration may be dropped by the host that made it only. */
static aclError unregister(struct plugin_host *h, struct pw_msg *m)
{
	aclrtAllocatorDesc desc = NULL;

	if (aclrtAllocatorGetByStream(P(m->v[0]), &desc, NULL, NULL, NULL, NULL, NULL) ==
		    ACL_SUCCESS &&
	    !owns(h, OWN_DESC, U(desc), false))
		return ACL_ERROR_INVALID_PARAM;
	return aclrtAllocatorUnregister(P(m->v[0]));
}

/* A destroyed descriptor's record goes; registrations made from it keep a
 * copy in the device, so its blocks still find their host. */
static void forget_desc(struct plugin_host *h, uint64_t desc)
{
	pthread_mutex_lock(&h->lock);
	for (struct ph_desc **pp = &h->descs; *pp; pp = &(*pp)->next)
		if ((*pp)->desc == desc) {
			struct ph_desc *d = *pp;
			*pp = d->next;
			d->next = h->retired_descs;
			h->retired_descs = d;
			break;
		}
	pthread_mutex_unlock(&h->lock);
}

static aclError serve_desc(struct plugin_host *h, struct pw_msg *m)
{
	switch (m->op) {
	case PW_ACL_AllocatorCreateDesc: {
		aclrtAllocatorDesc d = aclrtAllocatorCreateDesc();
		return made(h, d ? ACL_SUCCESS : ACL_ERROR_RT_MEMORY_ALLOCATION, OWN_DESC, d, 0, m);
	}
	case PW_ACL_AllocatorDestroyDesc:
		if (!owns(h, OWN_DESC, m->v[0], true))
			return ACL_ERROR_INVALID_PARAM;
		forget_desc(h, m->v[0]);
		return aclrtAllocatorDestroyDesc(P(m->v[0]));
	case PW_ACL_AllocatorSetObjToDesc:
		return set_desc(h, m, -1);
	case PW_ACL_AllocatorSetAllocFuncToDesc:
		return set_desc(h, m, PW_DESC_ALLOC);
	case PW_ACL_AllocatorSetFreeFuncToDesc:
		return set_desc(h, m, PW_DESC_FREE);
	case PW_ACL_AllocatorSetAllocAdviseFuncToDesc:
		return set_desc(h, m, PW_DESC_ALLOC_ADVISE);
	case PW_ACL_AllocatorSetGetAddrFromBlockFuncToDesc:
		return set_desc(h, m, PW_DESC_ADDR);
	case PW_ACL_AllocatorRegister:
		if (!owns(h, OWN_DESC, m->v[1], false))
			return ACL_ERROR_INVALID_PARAM;
		return aclrtAllocatorRegister(P(m->v[0]), P(m->v[1]));
	case PW_ACL_AllocatorUnregister:
		return unregister(h, m);
	case PW_ACL_AllocatorGetByStream:
		return get_by_stream(h, m);
	default:
		return ACL_ERROR_FEATURE_UNSUPPORTED;
	}
}

/* torch_npu's block handles: a handle is the daemon's, checked there. */
static aclError serve_block(struct plugin_host *h, struct pw_msg *m)
{
	const struct plugin_block_api *b = h->blocks;

	if (!b)
		return ACL_ERROR_FEATURE_UNSUPPORTED;
	switch (m->op) {
	case PW_ACL_MallocBlock:
		m->v[0] = U(b->malloc_block(m->v[0], P(m->v[1]), (int)(int64_t)m->v[2]));
		if (m->v[0])
			own(h, OWN_BLOCK, m->v[0], 0);
		return ACL_SUCCESS;
	case PW_ACL_FreeBlock:
		if (owns(h, OWN_BLOCK, m->v[0], true))
			b->free_block(P(m->v[0]));
		return ACL_SUCCESS;
	case PW_ACL_GetBlockPtr:
		m->v[0] = owns(h, OWN_BLOCK, m->v[0], false) ? U(b->block_ptr(P(m->v[0]))) : 0;
		return ACL_SUCCESS;
	default:
		m->v[0] = owns(h, OWN_BLOCK, m->v[0], false) ? b->block_size(P(m->v[0])) : 0;
		return ACL_SUCCESS;
	}
}

static aclError serve_filter(struct plugin_host *h, struct pw_msg *m)
{
	struct ph_filter *f;

	pthread_mutex_lock(&h->lock);
	for (f = h->filters; f && !(f->filter == m->v[0] && f->arg == m->v[1]); f = f->next)
		;
	pthread_mutex_unlock(&h->lock);
	/* Asked outside its scope: the answer upstream's would give, "no". */
	if (!f)
		return 0;
	return ((npumemfs_stream_filter)P(f->filter))(P(m->v[2]), P(f->arg)) ? 1 : 0;
}

/*
 * Sharing memory: a host shares and imports only memory of its own. A
 * key or number names a block or handle, which the host must own, so
 * that a key read from somewhere cannot reach another tensor's memory,
 * nor its close withdraw another's key.
 */
static aclError export_key(struct plugin_host *h, struct pw_msg *m)
{
	aclError rc;

	if (!owns(h, OWN_DEVICE, m->v[0], false))
		return ACL_ERROR_INVALID_PARAM;
	rc = aclrtIpcMemGetExportKey(P(m->v[0]), m->v[1], m->data,
				     m->v[2] < PW_MAX_DATA ? m->v[2] : PW_MAX_DATA, m->v[3]);
	m->len = rc == ACL_SUCCESS ? ACL_IPC_HANDLE_SIZE : 0;
	/* Another of the host's threads may have freed the block meanwhile,
	 * and the address gone to someone else: no key for that. */
	if (rc == ACL_SUCCESS && !owns(h, OWN_DEVICE, m->v[0], false)) {
		aclrtIpcMemClose(m->data);
		m->len = 0;
		return ACL_ERROR_INVALID_PARAM;
	}
	return rc;
}

/* The key in the message, a string of less than ACL_IPC_HANDLE_SIZE
 * bytes, or NULL. */
static const char *key_of(const struct pw_msg *m)
{
	if (m->len == 0 || m->len > ACL_IPC_HANDLE_SIZE || m->data[m->len - 1] != '\0')
		return NULL;
	return m->data;
}

/* Whether the block `key` names is the host's: an import tells, and is
 * undone at once. The pair leaves the key as it found it even when its
 * exporter's close comes between them: that close then takes back this
 * import, and this close withdraws the key in its place. */
static bool owns_key(struct plugin_host *h, const char *key)
{
	void *p = NULL;

	if (!key || aclrtIpcMemImportByKey(&p, key, 0) != ACL_SUCCESS)
		return false;
	aclrtIpcMemClose(key);
	return owns(h, OWN_DEVICE, U(p), false);
}

/* An import of a number is one more reference to that handle, freed with
 * aclrtFreePhysical like the first. */
static aclError import_shareable(struct plugin_host *h, struct pw_msg *m)
{
	void *p = NULL;
	aclError rc = aclrtMemImportFromShareableHandle(m->v[0], (int32_t)m->v[1], &p);

	if (rc != ACL_SUCCESS)
		return rc;
	if (!owns_again(h, OWN_PHYSICAL, U(p))) {
		aclrtFreePhysical(p);
		return ACL_ERROR_INVALID_PARAM;
	}
	m->v[0] = U(p);
	return rc;
}

static bool is_ipc(enum pw_acl_op op)
{
	return op == PW_ACL_IpcMemGetExportKey || op == PW_ACL_IpcMemImportByKey ||
	       op == PW_ACL_IpcMemClose || op == PW_ACL_MemExportToShareableHandle ||
	       op == PW_ACL_MemImportFromShareableHandle;
}

static aclError serve_ipc(struct plugin_host *h, struct pw_msg *m)
{
	const char *key;
	uint64_t number = 0;
	void *p = NULL;
	aclError rc;

	if (m->op == PW_ACL_IpcMemGetExportKey)
		return export_key(h, m);
	/* The key, if any, is read in place; no other answer carries data. */
	key = key_of(m);
	m->len = 0;
	switch (m->op) {
	case PW_ACL_IpcMemImportByKey:
		if (!owns_key(h, key))
			return ACL_ERROR_INVALID_PARAM;
		rc = aclrtIpcMemImportByKey(&p, key, m->v[0]);
		m->v[0] = U(p);
		return rc;
	case PW_ACL_IpcMemClose:
		return owns_key(h, key) ? aclrtIpcMemClose(key) : ACL_ERROR_INVALID_PARAM;
	case PW_ACL_MemExportToShareableHandle:
		if (!owns(h, OWN_PHYSICAL, m->v[0], false))
			return ACL_ERROR_INVALID_PARAM;
		rc = aclrtMemExportToShareableHandle(P(m->v[0]), (aclrtMemHandleType)m->v[1],
						     m->v[2], &number);
		m->v[0] = number;
		return rc;
	case PW_ACL_MemImportFromShareableHandle:
		return import_shareable(h, m);
	default:
		return ACL_ERROR_FEATURE_UNSUPPORTED;
	}
}

/* An application's log line, printed by the daemon as one of its own
 * plug-ins' would be: its pid, its level setting, its stdout or stderr.
 * The message holds the function, the file and the formatted text, each
 * ending with its NUL. */
static aclError serve_app_log(struct pw_msg *m)
{
	const char *part[3];
	size_t len = m->len, at = 0;

	m->len = 0;
	for (int i = 0; i < 3; i++) {
		const char *end = at < len ? memchr(m->data + at, '\0', len - at) : NULL;

		if (!end)
			return ACL_ERROR_INVALID_PARAM;
		part[i] = m->data + at;
		at = (size_t)(end - m->data) + 1;
	}
	if (at != len || m->v[0] > INT32_MAX || m->v[1] > UINT32_MAX)
		return ACL_ERROR_INVALID_PARAM;
	aclAppLog((aclLogLevel)m->v[0], part[0], part[1], (uint32_t)m->v[1], "%s", part[2]);
	return ACL_SUCCESS;
}

void ph_serve(struct plugin_host *h, struct pw_msg *m)
{
	enum pw_acl_op op = (enum pw_acl_op)m->op;
	const char *text;

	if (m->kind == PW_FILTER) {
		m->rc = serve_filter(h, m);
		m->len = 0;
		m->kind = PW_FILTER_RETURN;
		return;
	}
	m->kind = PW_ACL_RETURN;
	if (op == PW_ACL_Memcpy || op == PW_ACL_MemcpyAsync) {
		m->rc = serve_copy(h, m);
		return;
	}
	if (op == PW_ACL_MallocPhysical || op == PW_ACL_MemGetAllocationGranularity) {
		m->rc = serve_vm(h, m);
		return;
	}
	if (op == PW_ACL_AppLog) {
		m->rc = serve_app_log(m);
		return;
	}
	if (is_ipc(op)) {
		m->rc = serve_ipc(h, m);
		return;
	}
	m->len = 0;
	switch (op) {
	case PW_ACL_GetRecentErrMsg:
		text = aclGetRecentErrMsg();
		m->len = text ? (uint32_t)strnlen(text, PW_MAX_DATA - 1) + 1 : 0;
		if (text)
			memcpy(m->data, text, m->len - 1), m->data[m->len - 1] = '\0';
		m->rc = ACL_SUCCESS;
		return;
	case PW_ACL_Malloc: case PW_ACL_MallocAlign32: case PW_ACL_Free:
	case PW_ACL_MallocHost: case PW_ACL_FreeHost:
		m->rc = serve_memory(h, m);
		return;
	case PW_ACL_ReserveMemAddress: case PW_ACL_ReleaseMemAddress: case PW_ACL_FreePhysical:
	case PW_ACL_MapMem: case PW_ACL_UnmapMem:
		m->rc = serve_vm(h, m);
		return;
	case PW_ACL_CreateStream: case PW_ACL_CreateStreamWithConfig:
	case PW_ACL_DestroyStream: case PW_ACL_SynchronizeStream:
	case PW_ACL_StreamGetId: case PW_ACL_CreateEvent: case PW_ACL_RecordEvent:
	case PW_ACL_QueryEventStatus: case PW_ACL_SynchronizeEvent: case PW_ACL_DestroyEvent:
		m->rc = serve_stream(h, m);
		return;
	case PW_ACL_SetDevice: case PW_ACL_GetDevice: case PW_ACL_GetDeviceCount:
	case PW_ACL_SynchronizeDevice: case PW_ACL_GetMemInfo: case PW_ACL_PointerGetAttributes:
	case PW_ACL_MemGetAddressRange: case PW_ACL_GetCurrentContext:
	case PW_ACL_SetCurrentContext: case PW_ACL_GetMemUsageInfo:
		m->rc = serve_device(m);
		return;
	case PW_ACL_MallocBlock: case PW_ACL_FreeBlock: case PW_ACL_GetBlockPtr:
	case PW_ACL_GetBlockSize:
		m->rc = serve_block(h, m);
		return;
	default:
		m->rc = op < PW_NACL_OPS ? serve_desc(h, m) : ACL_ERROR_FEATURE_UNSUPPORTED;
		return;
	}
}

void ph_filter_allow(struct plugin_host *h, struct npumemfs_mempool_id pool, void *filter,
		     void *arg)
{
	struct ph_filter *f = calloc(1, sizeof(*f));

	if (!f)
		return;
	*f = (struct ph_filter){ pool, U(filter), U(arg), NULL };
	pthread_mutex_lock(&h->lock);
	f->next = h->filters;
	h->filters = f;
	pthread_mutex_unlock(&h->lock);
}

void ph_filter_forbid(struct plugin_host *h, struct npumemfs_mempool_id pool)
{
	pthread_mutex_lock(&h->lock);
	for (struct ph_filter **pp = &h->filters; *pp;) {
		struct ph_filter *f = *pp;
		if (f->pool.first == pool.first && f->pool.second == pool.second) {
			*pp = f->next;
			free(f);
		} else {
			pp = &f->next;
		}
	}
	pthread_mutex_unlock(&h->lock);
}

/*
 * The host is going: registrations of its descriptors would call a
 * process that is no more, so they go first; its streams and events are
 * destroyed. Its memory stays allocated: tensors may still name it (their
 * plug-in's blocks are reported lost, not reused under them).
 */
void ph_release_all(struct plugin_host *h)
{
	struct ph_owned *o, *tmp;
	struct ph_desc *d;

	HASH_ITER(hh, h->owned, o, tmp) {
		if (o->kind == OWN_STREAM) {
			aclrtAllocatorUnregister(P(o->key));
			aclrtDestroyStream(P(o->key));
		} else if (o->kind == OWN_EVENT) {
			aclrtDestroyEvent(P(o->key));
		} else if (o->kind == OWN_DESC) {
			aclrtAllocatorDestroyDesc(P(o->key));
		}
	}
	while ((d = h->descs)) {
		h->descs = d->next;
		free(d);
	}
	while ((d = h->retired_descs)) {
		h->retired_descs = d->next;
		free(d);
	}
	HASH_ITER(hh, h->owned, o, tmp) {
		HASH_DEL(h->owned, o);
		free(o);
	}
	while (h->filters) {
		struct ph_filter *f = h->filters;
		h->filters = f->next;
		free(f);
	}
}
