/*
 * acl_rt.h - the subset of Ascend's ACL runtime API that npumemfs simulates.
 *
 * Same names, types and signatures as CANN's acl/acl_rt.h. Everything here
 * acts on the simulated NPU (libnpusim): one simulator per process, shared by
 * the daemon and every allocator plug-in it loads.
 */
#ifndef ACL_ACL_RT_H
#define ACL_ACL_RT_H

#include "acl_base.h"
#include "acl_rt_allocator.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum aclrtMemMallocPolicy {
	ACL_MEM_MALLOC_HUGE_FIRST,
	ACL_MEM_MALLOC_HUGE_ONLY,
	ACL_MEM_MALLOC_NORMAL_ONLY,
	ACL_MEM_MALLOC_HUGE_FIRST_P2P,
	ACL_MEM_MALLOC_HUGE_ONLY_P2P,
	ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
	ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x0100,
	ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000,
} aclrtMemMallocPolicy;

typedef enum aclrtMemAttr {
	ACL_DDR_MEM,
	ACL_HBM_MEM,
	ACL_DDR_MEM_HUGE,
	ACL_DDR_MEM_NORMAL,
	ACL_HBM_MEM_HUGE,
	ACL_HBM_MEM_NORMAL,
	ACL_DDR_MEM_P2P_HUGE,
	ACL_DDR_MEM_P2P_NORMAL,
	ACL_HBM_MEM_P2P_HUGE,
	ACL_HBM_MEM_P2P_NORMAL,
} aclrtMemAttr;

typedef enum aclrtMemcpyKind {
	ACL_MEMCPY_HOST_TO_HOST,
	ACL_MEMCPY_HOST_TO_DEVICE,
	ACL_MEMCPY_DEVICE_TO_HOST,
	ACL_MEMCPY_DEVICE_TO_DEVICE,
} aclrtMemcpyKind;

typedef enum aclrtEventRecordedStatus {
	ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
	ACL_EVENT_RECORDED_STATUS_COMPLETE = 1,
} aclrtEventRecordedStatus;

/*
 * Graph capture. Current CANN declares the aclmdlRI capture calls here
 * (acl/acl_rt.h); older CANN had them in acl/acl_mdl.h, which therefore
 * includes this file. A model runtime instance is a handle; the simulator
 * makes its value the model's id (aclmdlRIGetId), never reused.
 */
typedef void *aclmdlRI;

typedef enum {
	ACL_MODEL_RI_CAPTURE_MODE_GLOBAL = 0,
	ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL,
	ACL_MODEL_RI_CAPTURE_MODE_RELAXED,
} aclmdlRICaptureMode;

typedef enum {
	ACL_MODEL_RI_CAPTURE_STATUS_NONE = 0,
	ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE,
	ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED,
} aclmdlRICaptureStatus;

/* Virtual memory (CANN 7.0+), as torch_npu's expandable segments use it. */
typedef void *aclrtDrvMemHandle;

typedef enum aclrtMemLocationType {
	ACL_MEM_LOCATION_TYPE_HOST = 0, /* pinned host pages (id 0) */
	ACL_MEM_LOCATION_TYPE_DEVICE,
	ACL_MEM_LOCATION_TYPE_UNREGISTERED,
} aclrtMemLocationType;

typedef struct aclrtMemLocation {
	uint32_t id;
	aclrtMemLocationType type;
} aclrtMemLocation;

typedef struct aclrtPtrAttributes {
	aclrtMemLocation location;
	uint32_t pageSize;
	uint32_t rsv[4];
} aclrtPtrAttributes;

typedef struct aclrtMemUsageInfo {
	char name[32];
	uint64_t curMemSize;
	uint64_t memPeakSize;
	size_t reserved[8];
} aclrtMemUsageInfo;

typedef enum aclrtMemAllocationType {
	ACL_MEM_ALLOCATION_TYPE_PINNED = 0,
} aclrtMemAllocationType;

typedef enum aclrtMemHandleType {
	ACL_MEM_HANDLE_TYPE_NONE = 0,
} aclrtMemHandleType;

typedef struct aclrtPhysicalMemProp {
	aclrtMemHandleType handleType;
	aclrtMemAllocationType allocationType;
	aclrtMemAttr memAttr;
	aclrtMemLocation location;
	uint64_t reserve;
} aclrtPhysicalMemProp;

typedef enum aclrtMemGranularityOptions {
	ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM,
	ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED,
	ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF = 0xFFFF,
} aclrtMemGranularityOptions;

/*
 * The calling thread's last error: the code of its latest runtime call
 * that failed, ACL_SUCCESS if none did. aclrtPeekAtLastError leaves it,
 * aclrtGetLastError clears it. Thread level only (other levels are
 * ACL_ERROR_INVALID_PARAM).
 */
typedef enum aclrtLastErrLevel {
	ACL_RT_THREAD_LEVEL = 0,
} aclrtLastErrLevel;

ACL_FUNC_VISIBILITY aclError aclrtPeekAtLastError(aclrtLastErrLevel level);
ACL_FUNC_VISIBILITY aclError aclrtGetLastError(aclrtLastErrLevel level);

/* Devices. The current device is per thread, as in CANN. */
ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t *deviceId);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCount(uint32_t *count);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDevice(void);
/*
 * Contexts: each device has one, its default context, which is what
 * aclrtSetDevice makes current. aclrtGetCurrentContext gives the calling
 * thread's (that of device 0 before any aclrtSetDevice); making a context
 * current makes its device current. A handle that is no device's context
 * is ACL_ERROR_INVALID_PARAM, and nothing changes.
 */
ACL_FUNC_VISIBILITY aclError aclrtGetCurrentContext(aclrtContext *context);
ACL_FUNC_VISIBILITY aclError aclrtSetCurrentContext(aclrtContext context);

/* Memory on the current device. */
ACL_FUNC_VISIBILITY aclError aclrtMalloc(void **devPtr, size_t size,
					 aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtMallocAlign32(void **devPtr, size_t size,
						aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtFree(void *devPtr);
ACL_FUNC_VISIBILITY aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free,
					     size_t *total);
/*
 * The memory each module of the runtime holds on device `deviceId`, at most
 * `inputNum` entries, *outputNum of them filled. The simulator has one
 * module, "npusim": the bytes its mallocs and physical handles hold
 * (page-rounded) and their peak since start.
 */
ACL_FUNC_VISIBILITY aclError aclrtGetMemUsageInfo(uint32_t deviceId, aclrtMemUsageInfo *memUsageInfo,
						  size_t inputNum, size_t *outputNum);
/*
 * What an address is. Only memory held now is a block: a live aclrtMalloc
 * block, a mapped range of a reservation, an aclrtMallocHost block.
 * aclrtPointerGetAttributes gives the device (type
 * ACL_MEM_LOCATION_TYPE_DEVICE, id the device), or ACL_MEM_LOCATION_TYPE_HOST
 * for host memory and any address outside the devices' memory; a device
 * address that no live block holds (freed with aclrtFree, an unmapped page)
 * is ACL_ERROR_INVALID_PARAM. aclrtMemGetAddressRange gives the start and
 * size of the block or mapping holding ptr (ACL_ERROR_INVALID_PARAM for none).
 */
ACL_FUNC_VISIBILITY aclError aclrtPointerGetAttributes(const void *ptr,
						       aclrtPtrAttributes *attributes);
ACL_FUNC_VISIBILITY aclError aclrtMemGetAddressRange(void *ptr, void **pbase, size_t *psize);
ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void *dst, size_t destMax,
					 const void *src, size_t count,
					 aclrtMemcpyKind kind);
/*
 * The same copy as work on `stream` (NULL: the default stream). The bytes
 * move at once and the copy takes no virtual time. On a capturing stream
 * the copy is recorded into the model instead, and made again, reading
 * `src` anew, by every aclmdlRIExecuteAsync of it.
 */
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsync(void *dst, size_t destMax,
					      const void *src, size_t count,
					      aclrtMemcpyKind kind, aclrtStream stream);

/*
 * Pinned (page-locked) host memory, counted against the machine's host
 * capacity. aclrtMallocHost gives memory aligned to 4 KiB, committed on
 * first touch; ACL_ERROR_RT_MEMORY_ALLOCATION when the capacity is spent.
 */
ACL_FUNC_VISIBILITY aclError aclrtMallocHost(void **hostPtr, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtFreeHost(void *hostPtr);

/*
 * Virtual memory. A reservation is address space only; physical handles
 * hold device memory (whole pages of the device named in prop->location,
 * counted against its capacity) or, with ACL_MEM_LOCATION_TYPE_HOST and id
 * 0, pinned host memory (2 MiB pages of the host capacity) and keep their bytes while unmapped;
 * aclrtMapMem places [offset, offset + size) of a handle at virPtr inside
 * a reservation, aclrtUnmapMem removes the mapping that starts at virPtr.
 * Sizes, offsets and addresses are multiples of the granularity (the
 * device's page size). A handle must be unmapped before it is freed, and
 * a reservation emptied before it is released.
 */
ACL_FUNC_VISIBILITY aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop,
							      aclrtMemGranularityOptions option,
							      size_t *granularity);
ACL_FUNC_VISIBILITY aclError aclrtReserveMemAddress(void **virPtr, size_t size,
						    size_t alignment, void *expectPtr,
						    uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtReleaseMemAddress(void *virPtr);
ACL_FUNC_VISIBILITY aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
						 const aclrtPhysicalMemProp *prop,
						 uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtFreePhysical(aclrtDrvMemHandle handle);
ACL_FUNC_VISIBILITY aclError aclrtMapMem(void *virPtr, size_t size, size_t offset,
					 aclrtDrvMemHandle handle, uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtUnmapMem(void *virPtr);

/*
 * Sharing memory with another process, which in the simulator is this
 * one: what an import gives is the memory exported.
 *
 * aclrtIpcMemGetExportKey: the key (a string of less than
 * ACL_IPC_HANDLE_SIZE bytes, `len` at least that) of the aclrtMalloc block
 * that starts at devPtr, `size` bytes of it (0 < size <= the block), the
 * same key each time; flag 0 or ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION.
 * aclrtIpcMemImportByKey gives the block's address; aclrtIpcMemClose
 * undoes an import, or, with none left, withdraws the key. Freeing the
 * block withdraws its key.
 *
 * aclrtMemExportToShareableHandle: the number (never 0, the same each
 * time) a physical handle is shared by; handleType ACL_MEM_HANDLE_TYPE_NONE,
 * flags 0 or ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION.
 * aclrtMemImportFromShareableHandle gives the handle for that number on
 * its device, one more reference to the pages: each import is freed with
 * aclrtFreePhysical, and the pages go with the last.
 */
#define ACL_IPC_HANDLE_SIZE 65
#define ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION 0x1UL
#define ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION 0x1UL
ACL_FUNC_VISIBILITY aclError aclrtIpcMemGetExportKey(void *devPtr, size_t size, char *key,
						     size_t len, uint64_t flag);
ACL_FUNC_VISIBILITY aclError aclrtIpcMemImportByKey(void **devPtr, const char *key, uint64_t flag);
ACL_FUNC_VISIBILITY aclError aclrtIpcMemClose(const char *key);
ACL_FUNC_VISIBILITY aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle,
							     aclrtMemHandleType handleType,
							     uint64_t flags,
							     uint64_t *shareableHandle);
ACL_FUNC_VISIBILITY aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle,
							       int32_t deviceId,
							       aclrtDrvMemHandle *handle);

/*
 * Streams: NULL is the current device's default stream, which also has a
 * handle of its own (npusim_default_stream), as torch_npu's default stream
 * is a real stream; either names it. A default stream is never destroyed
 * and never captures.
 */
#define ACL_STREAM_FAST_LAUNCH 0x00000001U
#define ACL_STREAM_FAST_SYNC 0x00000002U
ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream *stream);
/* aclrtCreateStream with a priority and flags (ACL_STREAM_FAST_*), as
 * torch_npu makes its streams; neither changes the virtual clock. */
ACL_FUNC_VISIBILITY aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority,
							 uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream);
/* The stream's number: 0 for a default stream, then 1, 2, ... in creation
 * order across devices. ACL_ERROR_INVALID_PARAM for an unknown handle. */
ACL_FUNC_VISIBILITY aclError aclrtStreamGetId(aclrtStream stream, int32_t *streamId);

/* Events. */
ACL_FUNC_VISIBILITY aclError aclrtCreateEvent(aclrtEvent *event);
ACL_FUNC_VISIBILITY aclError aclrtRecordEvent(aclrtEvent event,
					      aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtQueryEventStatus(aclrtEvent event,
						   aclrtEventRecordedStatus *status);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEvent(aclrtEvent event);
ACL_FUNC_VISIBILITY aclError aclrtDestroyEvent(aclrtEvent event);

/*
 * Graph capture: between aclmdlRICaptureBegin and aclmdlRICaptureEnd, work
 * enqueued on the stream (npusim_launch*, aclrtMemcpyAsync) is recorded
 * into a model instead of running; aclmdlRIExecuteAsync enqueues the
 * recorded work again on any stream, as often as asked. Only created
 * streams capture. While a stream captures, synchronizing it, the device,
 * destroying it or recording an event on it is refused, and so are calls
 * that the capture mode forbids (aclrtMemcpy; an event query or
 * synchronize, which also invalidates the capture).
 */
ACL_FUNC_VISIBILITY aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode);
ACL_FUNC_VISIBILITY aclError aclmdlRICaptureGetInfo(aclrtStream stream,
						    aclmdlRICaptureStatus *status,
						    aclmdlRI *modelRI);
ACL_FUNC_VISIBILITY aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI);
ACL_FUNC_VISIBILITY aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclmdlRIDestroy(aclmdlRI modelRI);
/* The model's id: 1, 2, 3, ... in capture order, never reused in a process. */
ACL_FUNC_VISIBILITY aclError aclmdlRIGetId(aclmdlRI modelRI, uint32_t *modelRIId);

#ifdef __cplusplus
}
#endif

#endif /* ACL_ACL_RT_H */
