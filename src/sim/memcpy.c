/*
 * memcpy.c - aclrtMemcpy. Device pointers are host addresses, so the copy
 * itself is memmove; what the simulator adds is the checking a driver does.
 */
#include <string.h>

#include "sim.h"

/* [p, p + n) within one live aclrtMalloc block, within the size the block
 * was allocated with (after ACL's rounding), or within mapped VM. */
bool sim_range_is_device(const void *p, size_t n)
{
	struct sim_device *d = sim_device_holding(p);
	struct extent *e;
	uint64_t off, start;
	bool ok;

	if (!d)
		return sim_vm_range_mapped(p, n);
	off = (uint64_t)((const char *)p - d->base);
	pthread_mutex_lock(&d->lock);
	e = extent_map_containing(&d->mem, off / d->page_size);
	start = e ? e->start * d->page_size : 0;
	ok = e && n <= e->bytes && off - start <= e->bytes - n;
	pthread_mutex_unlock(&d->lock);
	return ok;
}

static bool kind_ok(aclrtMemcpyKind kind)
{
	return kind == ACL_MEMCPY_HOST_TO_HOST || kind == ACL_MEMCPY_HOST_TO_DEVICE ||
	       kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
		     aclrtMemcpyKind kind)
{
	bool dst_dev = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
	bool src_dev = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;

	if (!atomic_load(&sim.up))
		return ACL_ERROR_UNINITIALIZE;
	if (!dst || !src || !kind_ok(kind) || count > destMax)
		return ACL_ERROR_INVALID_PARAM;
	if (dst_dev && !sim_range_is_device(dst, count))
		return ACL_ERROR_INVALID_PARAM;
	if (src_dev && !sim_range_is_device(src, count))
		return ACL_ERROR_INVALID_PARAM;
	memmove(dst, src, count);
	return ACL_SUCCESS;
}
