/*
 * allocator_desc.c - ACL allocator descriptors and their registration per
 * stream (CANN runtime src/acl/aclrt_impl/allocator.cpp).
 *
 * Registrations live in a hash by stream handle under their own lock,
 * never taken with another: what Register keeps is a copy, so a
 * descriptor may be destroyed or changed without touching them. Nothing
 * here calls an allocator's functions; the runtime's users do, outside
 * every lock.
 */
#include <stdlib.h>

#include "sched.h"

struct sim_allocator_desc {
	aclrtAllocator obj;
	aclrtAllocatorAllocFunc alloc;
	aclrtAllocatorFreeFunc free;
	aclrtAllocatorAllocAdviseFunc alloc_advise;
	aclrtAllocatorGetAddrFromBlockFunc get_addr_from_block;
};

struct sim_registration {
	aclrtStream stream;        /* hash key */
	aclrtAllocatorDesc desc;   /* as given; perhaps destroyed since */
	struct sim_allocator_desc copy;
	UT_hash_handle hh;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_registration *registrations;

aclrtAllocatorDesc aclrtAllocatorCreateDesc(void)
{
	return calloc(1, sizeof(struct sim_allocator_desc));
}

aclError aclrtAllocatorDestroyDesc(aclrtAllocatorDesc allocatorDesc)
{
	if (!allocatorDesc)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	free(allocatorDesc);
	return ACL_SUCCESS;
}

/* Set*ToDesc: both the descriptor and the value must be given. */
#define SET_TO_DESC(fn, type, field)                                           \
	aclError fn(aclrtAllocatorDesc allocatorDesc, type value)              \
	{                                                                      \
		if (!allocatorDesc || !value)                                  \
			return sim_status(ACL_ERROR_INVALID_PARAM);                        \
		((struct sim_allocator_desc *)allocatorDesc)->field = value;   \
		return ACL_SUCCESS;                                            \
	}

SET_TO_DESC(aclrtAllocatorSetObjToDesc, aclrtAllocator, obj)
SET_TO_DESC(aclrtAllocatorSetAllocFuncToDesc, aclrtAllocatorAllocFunc, alloc)
SET_TO_DESC(aclrtAllocatorSetFreeFuncToDesc, aclrtAllocatorFreeFunc, free)
SET_TO_DESC(aclrtAllocatorSetAllocAdviseFuncToDesc, aclrtAllocatorAllocAdviseFunc, alloc_advise)
SET_TO_DESC(aclrtAllocatorSetGetAddrFromBlockFuncToDesc, aclrtAllocatorGetAddrFromBlockFunc,
	    get_addr_from_block)

aclError aclrtAllocatorRegister(aclrtStream stream, aclrtAllocatorDesc allocatorDesc)
{
	const struct sim_allocator_desc *d = allocatorDesc;
	struct sim_registration *r;

	if (!stream || !d || !d->obj || !d->alloc || !d->free || !d->get_addr_from_block)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	pthread_mutex_lock(&reg_lock);
	HASH_FIND_PTR(registrations, &stream, r);
	if (!r && (r = calloc(1, sizeof(*r))) != NULL) {
		r->stream = stream;
		HASH_ADD_PTR(registrations, stream, r);
	}
	if (r) {
		r->desc = allocatorDesc;
		r->copy = *d;
	}
	pthread_mutex_unlock(&reg_lock);
	return sim_status(r ? ACL_SUCCESS : ACL_ERROR_BAD_ALLOC);
}

aclError aclrtAllocatorUnregister(aclrtStream stream)
{
	struct sim_registration *r;

	if (!stream)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	pthread_mutex_lock(&reg_lock);
	HASH_FIND_PTR(registrations, &stream, r);
	if (r)
		HASH_DEL(registrations, r);
	pthread_mutex_unlock(&reg_lock);
	free(r);
	return ACL_SUCCESS;
}

aclError aclrtAllocatorGetByStream(aclrtStream stream, aclrtAllocatorDesc *allocatorDesc,
				   aclrtAllocator *allocator, aclrtAllocatorAllocFunc *allocFunc,
				   aclrtAllocatorFreeFunc *freeFunc,
				   aclrtAllocatorAllocAdviseFunc *allocAdviseFunc,
				   aclrtAllocatorGetAddrFromBlockFunc *getAddrFromBlockFunc)
{
	struct sim_registration *r;
	struct sim_registration found;

	if (!stream || !allocatorDesc)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	pthread_mutex_lock(&reg_lock);
	HASH_FIND_PTR(registrations, &stream, r);
	if (r)
		found = *r;
	pthread_mutex_unlock(&reg_lock);
	if (!r)
		return sim_status(ACL_ERROR_INVALID_PARAM); /* not registered with any allocator */
	*allocatorDesc = found.desc;
	if (allocator)
		*allocator = found.copy.obj;
	if (allocFunc)
		*allocFunc = found.copy.alloc;
	if (freeFunc)
		*freeFunc = found.copy.free;
	if (allocAdviseFunc)
		*allocAdviseFunc = found.copy.alloc_advise;
	if (getAddrFromBlockFunc)
		*getAddrFromBlockFunc = found.copy.get_addr_from_block;
	return ACL_SUCCESS;
}

/* Lock held: the registration as the public struct (its stream's device
 * and id come after, under the scheduler's lock). */
static struct npusim_allocator_reg public_of(const struct sim_registration *r)
{
	return (struct npusim_allocator_reg){
		.stream = r->stream, .stream_id = UINT64_MAX, .device = -1,
		.desc = r->desc, .obj = r->copy.obj, .alloc = r->copy.alloc,
		.free = r->copy.free, .alloc_advise = r->copy.alloc_advise,
		.get_addr_from_block = r->copy.get_addr_from_block,
	};
}

static int by_stream_id(const void *x, const void *y)
{
	const struct npusim_allocator_reg *a = x, *b = y;

	return a->stream_id < b->stream_id ? -1 : a->stream_id > b->stream_id;
}

size_t npusim_allocator_registrations(struct npusim_allocator_reg *out, size_t max)
{
	struct sim_registration *r, *tmp;
	size_t n = 0, filled = 0;

	pthread_mutex_lock(&reg_lock);
	HASH_ITER(hh, registrations, r, tmp) {
		if (filled < max)
			out[filled++] = public_of(r);
		n++;
	}
	pthread_mutex_unlock(&reg_lock);
	pthread_mutex_lock(&sim.sched_lock);
	for (size_t i = 0; i < filled; i++) {
		struct sim_stream *s = sched_stream(out[i].stream);
		if (s) {
			out[i].stream_id = atomic_load(&s->id);
			out[i].device = s->device;
		}
	}
	pthread_mutex_unlock(&sim.sched_lock);
	qsort(out, filled, sizeof(*out), by_stream_id);
	return n;
}

void sim_allocators_reset(void)
{
	struct sim_registration *r, *tmp;

	pthread_mutex_lock(&reg_lock);
	HASH_ITER(hh, registrations, r, tmp) {
		HASH_DEL(registrations, r);
		free(r);
	}
	pthread_mutex_unlock(&reg_lock);
}
