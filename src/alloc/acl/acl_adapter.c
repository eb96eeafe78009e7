/*
 * acl_adapter.c - allocators of the switch as ACL allocator descriptors.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl_adapter.h"
#include "block_handle.h"

struct acl_adapter {
	struct acl_adapters *owner;
	struct sw_entry *held;    /* the allocator, kept loaded */
	int device;
	aclrtStream stream;
	aclrtAllocatorDesc desc;
	uint64_t outstanding;     /* blocks the runtime holds, under owner->lock */
	uint64_t pins;            /* launches that may call it, under owner->lock */
	bool registered;          /* under owner->lock */
	char name[32];
	struct acl_adapter *next;
};

struct acl_adapters {
	pthread_mutex_t lock;
	struct sw *sw;
	struct acl_adapter *list;
};

const char *acl_error_name(aclError e, char *buf, size_t len)
{
	static const struct { aclError code; const char *name; } names[] = {
		{ 0, "ACL_SUCCESS" },
		{ 100000, "ACL_ERROR_INVALID_PARAM" },
		{ 100001, "ACL_ERROR_UNINITIALIZE" },
		{ 100019, "ACL_ERROR_INVALID_DEVICE" },
		{ 200000, "ACL_ERROR_BAD_ALLOC" },
		{ 207001, "ACL_ERROR_RT_MEMORY_ALLOCATION" },
		{ 107027, "ACL_ERROR_RT_STREAM_CAPTURED" },
		{ 500000, "ACL_ERROR_INTERNAL_ERROR" },
	};
	const char *name = "ACL error";

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].code == e)
			name = names[i].name;
	snprintf(buf, len, "%s (%d)", name, e);
	return buf;
}

int acl_adapters_create(struct sw *sw, struct acl_adapters **out)
{
	struct acl_adapters *as = calloc(1, sizeof(*as));

	if (!as)
		return -ENOMEM;
	as->sw = sw;
	pthread_mutex_init(&as->lock, NULL);
	*out = as;
	return 0;
}

/* Lock held: unlink `a` if nothing needs it any more; returns it then. */
static struct acl_adapter *unlink_unused(struct acl_adapters *as, struct acl_adapter *a)
{
	if (a->registered || a->outstanding || a->pins)
		return NULL;
	for (struct acl_adapter **pp = &as->list; *pp; pp = &(*pp)->next)
		if (*pp == a) {
			*pp = a->next;
			return a;
		}
	return NULL;
}

static void adapter_free_now(struct acl_adapters *as, struct acl_adapter *a)
{
	if (!a)
		return;
	aclrtAllocatorDestroyDesc(a->desc);
	sw_drop(as->sw, a->held);
	free(a);
}

static void *adapter_alloc(aclrtAllocator obj, size_t size)
{
	struct acl_adapter *a = obj;
	char err[512];
	struct npa_block_handle *h = npa_block_malloc(a->owner->sw, a->held, a->device, size,
						      a->stream, err, sizeof(err));

	if (h) {
		pthread_mutex_lock(&a->owner->lock);
		a->outstanding++;
		pthread_mutex_unlock(&a->owner->lock);
	}
	return h;
}

static void adapter_free(aclrtAllocator obj, aclrtAllocatorBlock block)
{
	struct acl_adapter *a = obj;
	struct acl_adapters *as = a->owner;
	char err[512];

	if (!block)
		return;
	npa_block_free(block, err, sizeof(err));
	pthread_mutex_lock(&as->lock);
	a->outstanding--;
	struct acl_adapter *gone = unlink_unused(as, a);
	pthread_mutex_unlock(&as->lock);
	adapter_free_now(as, gone);
}

static void *adapter_alloc_advise(aclrtAllocator obj, size_t size, aclrtAllocatorAddr addr)
{
	(void)addr;
	return adapter_alloc(obj, size);
}

static void *adapter_addr(aclrtAllocatorBlock block)
{
	return ((struct npa_block_handle *)block)->ptr;
}

static int refused(aclError e, const char *call, const char *why, char *err, size_t errlen)
{
	char name[64];

	snprintf(err, errlen, "%s: %s%s%s", call, acl_error_name(e, name, sizeof(name)),
		 why[0] ? ": " : "", why);
	return -EINVAL;
}

static struct acl_adapter *adapter_new(struct acl_adapters *as, struct sw_entry *held,
				       int device, aclrtStream stream)
{
	struct acl_adapter *a = calloc(1, sizeof(*a));
	aclrtAllocatorDesc d = a ? aclrtAllocatorCreateDesc() : NULL;

	if (!d) {
		free(a);
		return NULL;
	}
	*a = (struct acl_adapter){ .owner = as, .held = held, .device = device,
				   .stream = stream, .desc = d };
	snprintf(a->name, sizeof(a->name), "%s", sw_entry_name(held));
	aclrtAllocatorSetObjToDesc(d, a);
	aclrtAllocatorSetAllocFuncToDesc(d, adapter_alloc);
	aclrtAllocatorSetFreeFuncToDesc(d, adapter_free);
	aclrtAllocatorSetAllocAdviseFuncToDesc(d, adapter_alloc_advise);
	aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d, adapter_addr);
	return a;
}

/* Lock held: the adapters registered for `stream` are so no more. */
static struct acl_adapter *forget_stream(struct acl_adapters *as, aclrtStream stream)
{
	for (struct acl_adapter *a = as->list; a; a = a->next)
		if (a->registered && a->stream == stream) {
			a->registered = false;
			return unlink_unused(as, a);
		}
	return NULL;
}

int acl_adapters_register(struct acl_adapters *as, const char *name, int device,
			  aclrtStream stream, char *err, size_t errlen)
{
	struct sw_entry *held = sw_hold(as->sw, name);

	if (!held) {
		snprintf(err, errlen, "no allocator '%s' (caching or a loaded pluginK)", name);
		return -ENOENT;
	}
	if (!stream) {
		sw_drop(as->sw, held);
		return refused(ACL_ERROR_INVALID_PARAM, "aclrtAllocatorRegister",
			       "the stream must not be NULL (the default stream)", err, errlen);
	}
	struct acl_adapter *a = adapter_new(as, held, device, stream);
	if (!a) {
		sw_drop(as->sw, held);
		snprintf(err, errlen, "out of host memory");
		return -ENOMEM;
	}
	pthread_mutex_lock(&as->lock);
	aclError e = aclrtAllocatorRegister(stream, a->desc);
	struct acl_adapter *gone = NULL;
	if (e == ACL_SUCCESS) {
		gone = forget_stream(as, stream);
		a->registered = true;
		a->next = as->list;
		as->list = a;
	}
	pthread_mutex_unlock(&as->lock);
	adapter_free_now(as, gone);
	if (e != ACL_SUCCESS) {
		adapter_free_now(as, a);
		return refused(e, "aclrtAllocatorRegister", "", err, errlen);
	}
	return 0;
}

int acl_adapters_unregister(struct acl_adapters *as, aclrtStream stream, char *err,
			    size_t errlen)
{
	if (!stream)
		return refused(ACL_ERROR_INVALID_PARAM, "aclrtAllocatorUnregister",
			       "the stream must not be NULL (the default stream)", err, errlen);
	pthread_mutex_lock(&as->lock);
	aclError e = aclrtAllocatorUnregister(stream);
	struct acl_adapter *gone = e == ACL_SUCCESS ? forget_stream(as, stream) : NULL;
	pthread_mutex_unlock(&as->lock);
	adapter_free_now(as, gone);
	return e == ACL_SUCCESS ? 0 : refused(e, "aclrtAllocatorUnregister", "", err, errlen);
}

/* Lock held: `obj` if it is one of the listed adapters (never read
 * through before it is found: it may be freed memory). */
static struct acl_adapter *listed(struct acl_adapters *as, const void *obj)
{
	for (struct acl_adapter *a = as->list; a; a = a->next)
		if (a == obj)
			return a;
	return NULL;
}

bool acl_adapters_pin(struct acl_adapters *as, const void *obj)
{
	pthread_mutex_lock(&as->lock);
	struct acl_adapter *a = listed(as, obj);
	if (a)
		a->pins++;
	pthread_mutex_unlock(&as->lock);
	return a != NULL;
}

bool acl_adapters_unpin(struct acl_adapters *as, const void *obj)
{
	struct acl_adapter *gone = NULL;

	pthread_mutex_lock(&as->lock);
	struct acl_adapter *a = listed(as, obj);
	if (a) {
		a->pins--;
		gone = unlink_unused(as, a);
	}
	pthread_mutex_unlock(&as->lock);
	adapter_free_now(as, gone);
	return a != NULL;
}

const char *acl_adapters_owner(struct acl_adapters *as, aclrtAllocator obj, char *buf,
			       size_t len)
{
	const char *found = NULL;

	pthread_mutex_lock(&as->lock);
	struct acl_adapter *a = listed(as, obj);
	if (a)
		found = snprintf(buf, len, "%s", a->name) >= 0 ? buf : NULL;
	pthread_mutex_unlock(&as->lock);
	return found;
}

void acl_adapters_destroy(struct acl_adapters *as)
{
	if (!as)
		return;
	while (as->list) {
		struct acl_adapter *a = as->list;
		as->list = a->next;
		if (a->registered)
			aclrtAllocatorUnregister(a->stream);
		/* Blocks the runtime never gave back are the caller's bug; the
		 * allocators free them at their own teardown. */
		aclrtAllocatorDestroyDesc(a->desc);
		sw_drop(as->sw, a->held);
		free(a);
	}
	pthread_mutex_destroy(&as->lock);
	free(as);
}
