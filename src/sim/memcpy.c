/*
 * memcpy.c - aclrtMemcpy and aclrtMemcpyAsync. Device pointers are host
 * addresses, so the copy itself is memmove; what the simulator adds is the
 * checking a driver does, and the recording of a copy that a capturing
 * stream takes.
 *
 * Host memory counts as page-locked: the simulator has no other kind, and
 * CANN refuses a pageable host copy on a capturing stream.
 */
#include <string.h>

#include "capture.h"
#include "sched.h"

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

aclError sim_copy_check(void *dst, size_t destMax, const void *src, size_t count,
			aclrtMemcpyKind kind)
{
	bool dst_dev = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
	bool src_dev = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;

	if (!atomic_load(&sim.up))
		return sim_status(ACL_ERROR_UNINITIALIZE);
	if (!dst || !src || !kind_ok(kind) || count > destMax)
		return sim_status(ACL_ERROR_INVALID_PARAM);
	if (dst_dev && !sim_range_is_device(dst, count))
		return sim_status(ACL_ERROR_INVALID_PARAM);
	if (src_dev && !sim_range_is_device(src, count))
		return sim_status(ACL_ERROR_INVALID_PARAM);
	return ACL_SUCCESS;
}

/* A synchronous copy is an unsafe call to a capture mode, refused where
 * it forbids one (ApiImpl::MemCopySync) without ending the capture. */
aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
		     aclrtMemcpyKind kind)
{
	aclError rc = sim_copy_check(dst, destMax, src, count, kind);

	if (rc == ACL_SUCCESS)
		rc = capture_unsafe_call(NULL);
	if (rc == ACL_SUCCESS)
		memmove(dst, src, count);
	return sim_status(rc);
}

/* ACL_SUCCESS with *recorded set if the stream captures and took the copy. */
static aclError record_if_capturing(aclrtStream stream, const struct sim_task *t,
				    bool *recorded)
{
	struct sim_stream *s;
	aclError rc = ACL_ERROR_INVALID_PARAM;

	*recorded = false;
	pthread_mutex_lock(&sim.sched_lock);
	s = sched_stream(stream);
	if (s && s->cap.model) {
		*recorded = true;
		rc = capture_record(s, t);
	} else if (s) {
		rc = ACL_SUCCESS;
	}
	pthread_mutex_unlock(&sim.sched_lock);
	return sim_status(rc);
}

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
			  aclrtMemcpyKind kind, aclrtStream stream)
{
	struct sim_task t = {
		.kind = TASK_COPY, .dst = dst, .dest_max = destMax,
		.src = src, .count = count, .copy_kind = kind,
	};
	aclError rc = sim_copy_check(dst, destMax, src, count, kind);
	bool recorded = false;

	if (rc == ACL_SUCCESS)
		rc = record_if_capturing(stream, &t, &recorded);
	if (rc == ACL_SUCCESS && !recorded)
		memmove(dst, src, count);
	return sim_status(rc);
}
