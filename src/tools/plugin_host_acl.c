/*
 * plugin_host_acl.c - the ACL functions a plug-in calls, in its host.
 *
 * A call made while the thread serves a lane goes back on that lane, so
 * the daemon's thread that waits for the plug-in runs it, with its
 * current device, as a call in one process would. A call from a thread
 * of the plug-in's own goes on the async channel. Memory a plug-in takes
 * from the device is the daemon's: the host never maps it (host code
 * cannot touch device memory on an NPU either), and an aclrtMemcpy moves
 * the plug-in's side of the bytes in the message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <acl/acl_mdl.h>
#include <acl/acl_rt.h>
#include <acl/acl_rt_allocator.h>

#include <npumemfs/block_handle.h>

#include "alloc/plugin/plugin_box.h"
#include "plugin_host_acl.h"

static __thread struct pw_msg *scratch;

/* A message to fill: on a lane the box itself (turns alternate, so it is
 * ours until we post), elsewhere this thread's own buffer. */
static struct pw_msg *msg(uint32_t kind, uint32_t op)
{
	host_leave_if_copy();
	struct pw_msg *m = host_lane ? &host_lane->box->msg : scratch;

	if (!m && !(m = scratch = malloc(PW_MSG_MAX)))
		return NULL;
	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->op = op;
	return m;
}

/* A lane's turn: post, wait for the daemon's answer in the box. */
static void lane_exchange(struct host_lane *lane)
{
	lane->seq++;
	pw_box_post(lane->box, lane->seq);
	if (pw_box_wait(lane->box, lane->seq + 1, -1) != 1)
		_exit(PW_EXIT_DAEMON_GONE);
	lane->seq++;
	if (lane->box->msg.len > PW_MAX_DATA)
		_exit(PW_EXIT_PROTOCOL);
}

/* Send m, wait for its answer in m; the daemon gone ends the host. */
static void exchange(struct pw_msg *m)
{
	ssize_t n;

	if (host_lane) {
		lane_exchange(host_lane);
		return;
	}
	pthread_mutex_lock(&the_host.async_lock);
	n = send(the_host.async_fd, m, sizeof(*m) + m->len, MSG_NOSIGNAL);
	if (n > 0)
		n = recv(the_host.async_fd, m, PW_MSG_MAX, 0);
	pthread_mutex_unlock(&the_host.async_lock);
	if (n < (ssize_t)sizeof(*m))
		_exit(PW_EXIT_DAEMON_GONE);
}

static aclError rpc(struct pw_msg *m)
{
	if (!m)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	exchange(m);
	return m->rc;
}

#define U(x) ((uint64_t)(uintptr_t)(x))
#define P(x) ((void *)(uintptr_t)(x))

static aclError call0(enum pw_acl_op op, uint64_t a, uint64_t b, uint64_t c)
{
	struct pw_msg *m = msg(PW_ACL, op);

	if (m) {
		m->v[0] = a;
		m->v[1] = b;
		m->v[2] = c;
	}
	return rpc(m);
}

/* A call whose first result comes back in v[0]. */
static aclError call1(enum pw_acl_op op, uint64_t a, uint64_t b, uint64_t c, uint64_t *out)
{
	struct pw_msg *m = msg(PW_ACL, op);
	aclError rc;

	if (!out)
		return ACL_ERROR_INVALID_PARAM;
	if (m) {
		m->v[0] = a;
		m->v[1] = b;
		m->v[2] = c;
	}
	rc = rpc(m);
	if (rc == ACL_SUCCESS)
		*out = m->v[0];
	return rc;
}

const char *aclGetRecentErrMsg(void)
{
	static __thread char text[1024];
	struct pw_msg *m = msg(PW_ACL, PW_ACL_GetRecentErrMsg);

	if (rpc(m) != ACL_SUCCESS || !m->len)
		return NULL;
	m->data[m->len - 1] = '\0';
	snprintf(text, sizeof(text), "%s", m->data);
	return text;
}

aclError aclrtSetDevice(int32_t deviceId)
{
	return call0(PW_ACL_SetDevice, (uint64_t)(int64_t)deviceId, 0, 0);
}

aclError aclrtGetDevice(int32_t *deviceId)
{
	uint64_t v = 0;
	aclError rc = deviceId ? call1(PW_ACL_GetDevice, 0, 0, 0, &v) : ACL_ERROR_INVALID_PARAM;

	if (rc == ACL_SUCCESS)
		*deviceId = (int32_t)v;
	return rc;
}

aclError aclrtGetDeviceCount(uint32_t *count)
{
	uint64_t v = 0;
	aclError rc = count ? call1(PW_ACL_GetDeviceCount, 0, 0, 0, &v) : ACL_ERROR_INVALID_PARAM;

	if (rc == ACL_SUCCESS)
		*count = (uint32_t)v;
	return rc;
}

aclError aclrtSynchronizeDevice(void)
{
	return call0(PW_ACL_SynchronizeDevice, 0, 0, 0);
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	return call1(PW_ACL_Malloc, size, (uint64_t)policy, 0, (uint64_t *)devPtr);
}

aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
	return call1(PW_ACL_MallocAlign32, size, (uint64_t)policy, 0, (uint64_t *)devPtr);
}

aclError aclrtFree(void *devPtr)
{
	return call0(PW_ACL_Free, U(devPtr), 0, 0);
}

aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total)
{
	struct pw_msg *m = msg(PW_ACL, PW_ACL_GetMemInfo);
	aclError rc;

	if (!free || !total)
		return ACL_ERROR_INVALID_PARAM;
	if (m)
		m->v[0] = (uint64_t)attr;
	rc = rpc(m);
	if (rc == ACL_SUCCESS) {
		*free = m->v[0];
		*total = m->v[1];
	}
	return rc;
}

aclError aclrtPointerGetAttributes(const void *ptr, aclrtPtrAttributes *attributes)
{
	struct pw_msg *m = msg(PW_ACL, PW_ACL_PointerGetAttributes);
	aclError rc;

	if (!attributes)
		return ACL_ERROR_INVALID_PARAM;
	if (m)
		m->v[0] = U(ptr);
	rc = rpc(m);
	if (rc == ACL_SUCCESS && m->len == sizeof(*attributes))
		memcpy(attributes, m->data, sizeof(*attributes));
	return rc;
}

aclError aclrtMemGetAddressRange(void *ptr, void **pbase, size_t *psize)
{
	struct pw_msg *m = msg(PW_ACL, PW_ACL_MemGetAddressRange);
	aclError rc;

	if (m)
		m->v[0] = U(ptr);
	rc = rpc(m);
	if (rc == ACL_SUCCESS && pbase)
		*pbase = P(m->v[0]);
	if (rc == ACL_SUCCESS && psize)
		*psize = m->v[1];
	return rc;
}

/* One piece of a copy: the plug-in's side of its bytes travels in the
 * message, both ways; `rest` is what the whole copy has left from here,
 * so that the daemon refuses a copy that would run out of its block
 * before a first piece lands. */
static aclError copy_piece(enum pw_acl_op op, void *dst, size_t destMax, const void *src,
			   size_t count, size_t rest, aclrtMemcpyKind kind, aclrtStream stream)
{
	bool from_host = kind == ACL_MEMCPY_HOST_TO_DEVICE;
	bool to_host = kind == ACL_MEMCPY_DEVICE_TO_HOST;
	struct pw_msg *m = msg(PW_ACL, op);
	aclError rc;

	if (!m)
		return ACL_ERROR_RT_MEMORY_ALLOCATION;
	m->v[0] = U(dst);
	m->v[1] = destMax;
	m->v[2] = U(src);
	m->v[3] = count;
	m->v[4] = (uint64_t)kind;
	m->v[5] = U(stream);
	m->v[6] = rest;
	if (from_host) {
		memcpy(m->data, src, count);
		m->len = (uint32_t)count;
	}
	rc = rpc(m);
	if (rc == ACL_SUCCESS && to_host && m->len == count)
		memcpy(dst, m->data, count);
	return rc;
}

/* A copy with a host side goes a message's worth at a time, in order on
 * its stream; device to device moves no bytes through the host and goes
 * whole. */
static aclError copy(enum pw_acl_op op, void *dst, size_t destMax, const void *src,
		     size_t count, aclrtMemcpyKind kind, aclrtStream stream)
{
	size_t step = kind == ACL_MEMCPY_DEVICE_TO_DEVICE ? count : PW_MAX_DATA;
	size_t done = 0;
	aclError rc;

	if (!dst || !src || count > destMax)
		return ACL_ERROR_INVALID_PARAM;
	if (kind == ACL_MEMCPY_HOST_TO_HOST) {
		memmove(dst, src, count);
		return ACL_SUCCESS;
	}
	do {
		size_t n = count - done < step ? count - done : step;

		rc = copy_piece(op, (char *)dst + done, destMax - done, (const char *)src + done,
				n, count - done, kind, stream);
		done += n;
	} while (rc == ACL_SUCCESS && done < count);
	return rc;
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
		     aclrtMemcpyKind kind)
{
	return copy(PW_ACL_Memcpy, dst, destMax, src, count, kind, NULL);
}

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
			  aclrtMemcpyKind kind, aclrtStream stream)
{
	return copy(PW_ACL_MemcpyAsync, dst, destMax, src, count, kind, stream);
}

aclError aclrtMallocHost(void **hostPtr, size_t size)
{
	return call1(PW_ACL_MallocHost, size, 0, 0, (uint64_t *)hostPtr);
}

aclError aclrtFreeHost(void *hostPtr)
{
	return call0(PW_ACL_FreeHost, U(hostPtr), 0, 0);
}

aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop,
					  aclrtMemGranularityOptions option,
					  size_t *granularity)
{
	struct pw_msg *m = msg(PW_ACL, PW_ACL_MemGetAllocationGranularity);
	aclError rc;

	if (!prop || !granularity)
		return ACL_ERROR_INVALID_PARAM;
	if (m) {
		m->v[0] = (uint64_t)option;
		memcpy(m->data, prop, sizeof(*prop));
		m->len = sizeof(*prop);
	}
	rc = rpc(m);
	if (rc == ACL_SUCCESS)
		*granularity = m->v[0];
	return rc;
}

aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment, void *expectPtr,
				uint64_t flags)
{
	struct pw_msg *m = msg(PW_ACL, PW_ACL_ReserveMemAddress);
	aclError rc;

	if (!virPtr)
		return ACL_ERROR_INVALID_PARAM;
	if (m) {
		m->v[0] = size;
		m->v[1] = alignment;
		m->v[2] = U(expectPtr);
		m->v[3] = flags;
	}
	rc = rpc(m);
	if (rc == ACL_SUCCESS)
		*virPtr = P(m->v[0]);
	return rc;
}

aclError aclrtReleaseMemAddress(void *virPtr)
{
	return call0(PW_ACL_ReleaseMemAddress, U(virPtr), 0, 0);
}

aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
			     const aclrtPhysicalMemProp *prop, uint64_t flags)
{
	struct pw_msg *m = msg(PW_ACL, PW_ACL_MallocPhysical);
	aclError rc;

	if (!handle || !prop)
		return ACL_ERROR_INVALID_PARAM;
	if (m) {
		m->v[0] = size;
		m->v[1] = flags;
		memcpy(m->data, prop, sizeof(*prop));
		m->len = sizeof(*prop);
	}
	rc = rpc(m);
	if (rc == ACL_SUCCESS)
		*handle = P(m->v[0]);
	return rc;
}

aclError aclrtFreePhysical(aclrtDrvMemHandle handle)
{
	return call0(PW_ACL_FreePhysical, U(handle), 0, 0);
}

aclError aclrtMapMem(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle,
		     uint64_t flags)
{
	struct pw_msg *m = msg(PW_ACL, PW_ACL_MapMem);

	if (m) {
		m->v[0] = U(virPtr);
		m->v[1] = size;
		m->v[2] = offset;
		m->v[3] = U(handle);
		m->v[4] = flags;
	}
	return rpc(m);
}

aclError aclrtUnmapMem(void *virPtr)
{
	return call0(PW_ACL_UnmapMem, U(virPtr), 0, 0);
}

aclError aclrtCreateStream(aclrtStream *stream)
{
	return call1(PW_ACL_CreateStream, 0, 0, 0, (uint64_t *)stream);
}

aclError aclrtDestroyStream(aclrtStream stream)
{
	return call0(PW_ACL_DestroyStream, U(stream), 0, 0);
}

aclError aclrtSynchronizeStream(aclrtStream stream)
{
	return call0(PW_ACL_SynchronizeStream, U(stream), 0, 0);
}

aclError aclrtStreamGetId(aclrtStream stream, int32_t *streamId)
{
	uint64_t v = 0;
	aclError rc = streamId ? call1(PW_ACL_StreamGetId, U(stream), 0, 0, &v)
			       : ACL_ERROR_INVALID_PARAM;

	if (rc == ACL_SUCCESS)
		*streamId = (int32_t)v;
	return rc;
}

aclError aclrtCreateEvent(aclrtEvent *event)
{
	return call1(PW_ACL_CreateEvent, 0, 0, 0, (uint64_t *)event);
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
	return call0(PW_ACL_RecordEvent, U(event), U(stream), 0);
}

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status)
{
	uint64_t v = 0;
	aclError rc = status ? call1(PW_ACL_QueryEventStatus, U(event), 0, 0, &v)
			     : ACL_ERROR_INVALID_PARAM;

	if (rc == ACL_SUCCESS)
		*status = (aclrtEventRecordedStatus)v;
	return rc;
}

aclError aclrtSynchronizeEvent(aclrtEvent event)
{
	return call0(PW_ACL_SynchronizeEvent, U(event), 0, 0);
}

aclError aclrtDestroyEvent(aclrtEvent event)
{
	return call0(PW_ACL_DestroyEvent, U(event), 0, 0);
}

/* A plug-in has no business capturing a graph: torch does that. */
aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode)
{
	(void)stream, (void)mode;
	return ACL_ERROR_FEATURE_UNSUPPORTED;
}

aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus *status,
				aclmdlRI *modelRI)
{
	(void)stream, (void)status, (void)modelRI;
	return ACL_ERROR_FEATURE_UNSUPPORTED;
}

aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI)
{
	(void)stream, (void)modelRI;
	return ACL_ERROR_FEATURE_UNSUPPORTED;
}

aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream)
{
	(void)modelRI, (void)stream;
	return ACL_ERROR_FEATURE_UNSUPPORTED;
}

aclError aclmdlRIDestroy(aclmdlRI modelRI)
{
	(void)modelRI;
	return ACL_ERROR_FEATURE_UNSUPPORTED;
}

aclError aclmdlRIGetId(aclmdlRI modelRI, uint32_t *modelRIId)
{
	(void)modelRI, (void)modelRIId;
	return ACL_ERROR_FEATURE_UNSUPPORTED;
}

aclrtAllocatorDesc aclrtAllocatorCreateDesc(void)
{
	uint64_t v = 0;

	return call1(PW_ACL_AllocatorCreateDesc, 0, 0, 0, &v) == ACL_SUCCESS ? P(v) : NULL;
}

aclError aclrtAllocatorDestroyDesc(aclrtAllocatorDesc allocatorDesc)
{
	return call0(PW_ACL_AllocatorDestroyDesc, U(allocatorDesc), 0, 0);
}

aclError aclrtAllocatorSetObjToDesc(aclrtAllocatorDesc allocatorDesc, aclrtAllocator allocator)
{
	return call0(PW_ACL_AllocatorSetObjToDesc, U(allocatorDesc), U(allocator), 0);
}

aclError aclrtAllocatorSetAllocFuncToDesc(aclrtAllocatorDesc allocatorDesc,
					  aclrtAllocatorAllocFunc func)
{
	return call0(PW_ACL_AllocatorSetAllocFuncToDesc, U(allocatorDesc), U(func), 0);
}

aclError aclrtAllocatorSetFreeFuncToDesc(aclrtAllocatorDesc allocatorDesc,
					 aclrtAllocatorFreeFunc func)
{
	return call0(PW_ACL_AllocatorSetFreeFuncToDesc, U(allocatorDesc), U(func), 0);
}

aclError aclrtAllocatorSetAllocAdviseFuncToDesc(aclrtAllocatorDesc allocatorDesc,
						aclrtAllocatorAllocAdviseFunc func)
{
	return call0(PW_ACL_AllocatorSetAllocAdviseFuncToDesc, U(allocatorDesc), U(func), 0);
}

aclError aclrtAllocatorSetGetAddrFromBlockFuncToDesc(aclrtAllocatorDesc allocatorDesc,
						     aclrtAllocatorGetAddrFromBlockFunc func)
{
	return call0(PW_ACL_AllocatorSetGetAddrFromBlockFuncToDesc, U(allocatorDesc), U(func), 0);
}

aclError aclrtAllocatorRegister(aclrtStream stream, aclrtAllocatorDesc allocatorDesc)
{
	return call0(PW_ACL_AllocatorRegister, U(stream), U(allocatorDesc), 0);
}

aclError aclrtAllocatorUnregister(aclrtStream stream)
{
	return call0(PW_ACL_AllocatorUnregister, U(stream), 0, 0);
}

aclError aclrtAllocatorGetByStream(aclrtStream stream, aclrtAllocatorDesc *allocatorDesc,
				   aclrtAllocator *allocator, aclrtAllocatorAllocFunc *allocFunc,
				   aclrtAllocatorFreeFunc *freeFunc,
				   aclrtAllocatorAllocAdviseFunc *allocAdviseFunc,
				   aclrtAllocatorGetAddrFromBlockFunc *getAddrFromBlockFunc)
{
	struct pw_msg *m = msg(PW_ACL, PW_ACL_AllocatorGetByStream);
	aclError rc;

	if (m)
		m->v[0] = U(stream);
	rc = rpc(m);
	if (rc != ACL_SUCCESS)
		return rc;
	if (allocatorDesc)
		*allocatorDesc = P(m->v[0]);
	if (allocator)
		*allocator = P(m->v[1]);
	if (allocFunc)
		*allocFunc = (aclrtAllocatorAllocFunc)P(m->v[2]);
	if (freeFunc)
		*freeFunc = (aclrtAllocatorFreeFunc)P(m->v[3]);
	if (allocAdviseFunc)
		*allocAdviseFunc = (aclrtAllocatorAllocAdviseFunc)P(m->v[4]);
	if (getAddrFromBlockFunc)
		*getAddrFromBlockFunc = (aclrtAllocatorGetAddrFromBlockFunc)P(m->v[5]);
	return rc;
}

/* torch_npu's block handles, the daemon's. */
static uint64_t block_call(enum pw_acl_op op, uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t v = 0;

	return call1(op, a, b, c, &v) == ACL_SUCCESS ? v : 0;
}

void *MallocBlock(size_t size, void *stream, int device)
{
	return P(block_call(PW_ACL_MallocBlock, size, U(stream), (uint64_t)(int64_t)device));
}

void FreeBlock(void *handle)
{
	block_call(PW_ACL_FreeBlock, U(handle), 0, 0);
}

void *GetBlockPtr(const void *handle)
{
	return P(block_call(PW_ACL_GetBlockPtr, U(handle), 0, 0));
}

size_t GetBlockSize(const void *handle)
{
	return block_call(PW_ACL_GetBlockSize, U(handle), 0, 0);
}

/* The daemon's filter, asked from here; one record per (filter, arg). */
struct filter_rec {
	uint64_t filter, arg;
	struct filter_rec *next;
};

static struct filter_rec *filters;
static pthread_mutex_t filters_lock = PTHREAD_MUTEX_INITIALIZER;

static bool ask_filter(aclrtStream stream, void *arg)
{
	const struct filter_rec *r = arg;
	struct pw_msg *m = msg(PW_FILTER, 0);

	if (!m)
		return false;
	m->v[0] = r->filter;
	m->v[1] = r->arg;
	m->v[2] = U(stream);
	exchange(m);
	return m->rc == 1;
}

void host_filter_wrap(struct plugin_call *c)
{
	struct filter_rec *r;

	if (!c->filter)
		return;
	pthread_mutex_lock(&filters_lock);
	for (r = filters; r && !(r->filter == U(c->filter) && r->arg == U(c->arg)); r = r->next)
		;
	if (!r && (r = malloc(sizeof(*r)))) {
		*r = (struct filter_rec){ U(c->filter), U(c->arg), filters };
		filters = r;
	}
	pthread_mutex_unlock(&filters_lock);
	c->filter = r ? ask_filter : NULL;
	c->arg = r;
}
