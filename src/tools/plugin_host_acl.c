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
#include <stdarg.h>
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

/*
 * The thread's last error (aclrtPeekAtLastError) is kept here, from what
 * each of this thread's calls returned, not asked of the daemon: a lane is
 * served by whichever of the daemon's threads took it, and every thread of
 * the plug-in's own shares one daemon thread on the async channel, so the
 * daemon's record would mix other threads' failures (and the daemon's own)
 * into this one's; and refusals made here or by the daemon's checks of a
 * host never reach the simulator's record. This is what one process gives
 * a thread that runs only the plug-in: its own last failing call.
 */
static __thread aclError last_error;

static aclError keep_error(aclError rc)
{
	if (rc != ACL_SUCCESS)
		last_error = rc;
	return rc;
}

static aclError rpc(struct pw_msg *m)
{
	if (!m)
		return keep_error(ACL_ERROR_RT_MEMORY_ALLOCATION);
	exchange(m);
	return keep_error(m->rc);
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
		return keep_error(ACL_ERROR_INVALID_PARAM);
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

aclError aclrtPeekAtLastError(aclrtLastErrLevel level)
{
	return level == ACL_RT_THREAD_LEVEL ? last_error : ACL_ERROR_INVALID_PARAM;
}

aclError aclrtGetLastError(aclrtLastErrLevel level)
{
	aclError e = aclrtPeekAtLastError(level);

	if (level == ACL_RT_THREAD_LEVEL)
		last_error = ACL_SUCCESS;
	return e;
}

/* Copies s into the message's data from `at`, NUL included, at most `max`
 * bytes of it; where the next part starts. */
static size_t put_part(struct pw_msg *m, size_t at, const char *s, size_t max)
{
	size_t n = strnlen(s ? s : "", max);

	memcpy(m->data + at, s ? s : "", n);
	m->data[at + n] = '\0';
	return at + n + 1;
}

/*
 * The daemon prints the line, so that it reads and goes where a plug-in's
 * line does in the daemon: its pid, the level its environment keeps, its
 * stdout (whose buffer this process would lose at its _exit) or stderr.
 * The text is formatted here into as much as the simulator keeps; a
 * function or file name longer than 16 KiB is cut there.
 */
void aclAppLog(aclLogLevel logLevel, const char *func, const char *file, uint32_t line,
	       const char *fmt, ...)
{
	struct pw_msg *m;
	va_list ap;
	size_t at;
	int n;

	if (!fmt || !(m = msg(PW_ACL, PW_ACL_AppLog)))
		return;
	m->v[0] = (uint64_t)(int64_t)logLevel;
	m->v[1] = line;
	at = put_part(m, 0, func, 16 << 10);
	at = put_part(m, at, file, 16 << 10);
	va_start(ap, fmt);
	n = vsnprintf(m->data + at, 1024, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	m->len = (uint32_t)(at + strlen(m->data + at) + 1);
	exchange(m);
}

aclError aclrtSetDevice(int32_t deviceId)
{
	return call0(PW_ACL_SetDevice, (uint64_t)(int64_t)deviceId, 0, 0);
}

aclError aclrtGetDevice(int32_t *deviceId)
{
	uint64_t v = 0;
	aclError rc = call1(PW_ACL_GetDevice, 0, 0, 0, deviceId ? &v : NULL);

	if (rc == ACL_SUCCESS)
		*deviceId = (int32_t)v;
	return rc;
}

aclError aclrtGetDeviceCount(uint32_t *count)
{
	uint64_t v = 0;
	aclError rc = call1(PW_ACL_GetDeviceCount, 0, 0, 0, count ? &v : NULL);

	if (rc == ACL_SUCCESS)
		*count = (uint32_t)v;
	return rc;
}

aclError aclrtSynchronizeDevice(void)
{
	return call0(PW_ACL_SynchronizeDevice, 0, 0, 0);
}

aclError aclrtGetCurrentContext(aclrtContext *context)
{
	return call1(PW_ACL_GetCurrentContext, 0, 0, 0, (uint64_t *)context);
}

aclError aclrtSetCurrentContext(aclrtContext context)
{
	return call0(PW_ACL_SetCurrentContext, U(context), 0, 0);
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
		return keep_error(ACL_ERROR_INVALID_PARAM);
	if (m)
		m->v[0] = (uint64_t)attr;
	rc = rpc(m);
	if (rc == ACL_SUCCESS) {
		*free = m->v[0];
		*total = m->v[1];
	}
	return rc;
}

/* As many entries as a message holds; the daemon refuses null outputs in
 * the simulator's order of checks. */
aclError aclrtGetMemUsageInfo(uint32_t deviceId, aclrtMemUsageInfo *memUsageInfo,
			      size_t inputNum, size_t *outputNum)
{
	const size_t fits = PW_MEM_USAGE_FITS;
	struct pw_msg *m = msg(PW_ACL, PW_ACL_GetMemUsageInfo);
	aclError rc;

	if (m) {
		m->v[0] = deviceId;
		m->v[1] = inputNum < fits ? inputNum : fits;
		m->v[2] = memUsageInfo && outputNum;
	}
	rc = rpc(m);
	if (rc != ACL_SUCCESS || !memUsageInfo || !outputNum)
		return rc;
	if (m->v[0] > inputNum || m->len != m->v[0] * sizeof(*memUsageInfo))
		return keep_error(ACL_ERROR_INTERNAL_ERROR);
	memcpy(memUsageInfo, m->data, m->len);
	*outputNum = m->v[0];
	return rc;
}

aclError aclrtPointerGetAttributes(const void *ptr, aclrtPtrAttributes *attributes)
{
	struct pw_msg *m = msg(PW_ACL, PW_ACL_PointerGetAttributes);
	aclError rc;

	if (!attributes)
		return keep_error(ACL_ERROR_INVALID_PARAM);
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
		return keep_error(ACL_ERROR_RT_MEMORY_ALLOCATION);
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
		return keep_error(ACL_ERROR_INVALID_PARAM);
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
		return keep_error(ACL_ERROR_INVALID_PARAM);
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
		return keep_error(ACL_ERROR_INVALID_PARAM);
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
		return keep_error(ACL_ERROR_INVALID_PARAM);
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

aclError aclrtIpcMemGetExportKey(void *devPtr, size_t size, char *key, size_t len, uint64_t flag)
{
	struct pw_msg *m = msg(PW_ACL, PW_ACL_IpcMemGetExportKey);
	aclError rc;

	if (!key)
		return keep_error(ACL_ERROR_INVALID_PARAM);
	if (m) {
		m->v[0] = U(devPtr);
		m->v[1] = size;
		m->v[2] = len;
		m->v[3] = flag;
	}
	rc = rpc(m);
	if (rc == ACL_SUCCESS && m->len == ACL_IPC_HANDLE_SIZE && len >= ACL_IPC_HANDLE_SIZE)
		memcpy(key, m->data, ACL_IPC_HANDLE_SIZE);
	return rc;
}

/* A key of ACL_IPC_HANDLE_SIZE bytes or more is sent cut, without its
 * NUL: the daemon refuses it, as no key is that long. */
static struct pw_msg *key_msg(enum pw_acl_op op, const char *key)
{
	struct pw_msg *m = msg(PW_ACL, op);

	if (m) {
		m->len = (uint32_t)strnlen(key, ACL_IPC_HANDLE_SIZE);
		memcpy(m->data, key, m->len);
		if (m->len < ACL_IPC_HANDLE_SIZE)
			m->data[m->len++] = '\0';
	}
	return m;
}

aclError aclrtIpcMemImportByKey(void **devPtr, const char *key, uint64_t flag)
{
	struct pw_msg *m;
	aclError rc;

	if (!devPtr || !key)
		return keep_error(ACL_ERROR_INVALID_PARAM);
	if ((m = key_msg(PW_ACL_IpcMemImportByKey, key)))
		m->v[0] = flag;
	rc = rpc(m);
	if (rc == ACL_SUCCESS)
		*devPtr = P(m->v[0]);
	return rc;
}

aclError aclrtIpcMemClose(const char *key)
{
	if (!key)
		return keep_error(ACL_ERROR_INVALID_PARAM);
	return rpc(key_msg(PW_ACL_IpcMemClose, key));
}

aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle, aclrtMemHandleType handleType,
					 uint64_t flags, uint64_t *shareableHandle)
{
	return call1(PW_ACL_MemExportToShareableHandle, U(handle), (uint64_t)handleType, flags,
		     shareableHandle);
}

aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle, int32_t deviceId,
					   aclrtDrvMemHandle *handle)
{
	return call1(PW_ACL_MemImportFromShareableHandle, shareableHandle,
		     (uint64_t)(int64_t)deviceId, 0, (uint64_t *)handle);
}

aclError aclrtCreateStream(aclrtStream *stream)
{
	return call1(PW_ACL_CreateStream, 0, 0, 0, (uint64_t *)stream);
}

aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t flag)
{
	return call1(PW_ACL_CreateStreamWithConfig, priority, flag, 0, (uint64_t *)stream);
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
	aclError rc = call1(PW_ACL_StreamGetId, U(stream), 0, 0, streamId ? &v : NULL);

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
	aclError rc = call1(PW_ACL_QueryEventStatus, U(event), 0, 0, status ? &v : NULL);

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
	return keep_error(ACL_ERROR_FEATURE_UNSUPPORTED);
}

aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus *status,
				aclmdlRI *modelRI)
{
	(void)stream, (void)status, (void)modelRI;
	return keep_error(ACL_ERROR_FEATURE_UNSUPPORTED);
}

aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI)
{
	(void)stream, (void)modelRI;
	return keep_error(ACL_ERROR_FEATURE_UNSUPPORTED);
}

aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream)
{
	(void)modelRI, (void)stream;
	return keep_error(ACL_ERROR_FEATURE_UNSUPPORTED);
}

aclError aclmdlRIDestroy(aclmdlRI modelRI)
{
	(void)modelRI;
	return keep_error(ACL_ERROR_FEATURE_UNSUPPORTED);
}

aclError aclmdlRIGetId(aclmdlRI modelRI, uint32_t *modelRIId)
{
	(void)modelRI, (void)modelRIId;
	return keep_error(ACL_ERROR_FEATURE_UNSUPPORTED);
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
