/*
 * fakecuda.c - one simulated CUDA device for PyTorch's own caching
 * allocator, with the same rules as npumemfs's simulated NPU, so that the
 * two allocators see the same device:
 *
 * - device memory in 2 MiB pages, placed by the simulator's own extent map
 *   (src/sim/extent_map.c: best fit, lowest address among equals) in runs
 *   spanning four times the memory (extent_map.h), one count of bytes in
 *   use shared with physical handles, OOM past capacity: free pages
 *   decide, not a free run of them;
 * - virtual memory for expandable segments: reservations, physical
 *   handles of whole pages from a second extent map, map and unmap;
 * - streams whose work is open-ended (fakecuda_launch_open) until the
 *   stream or the device is synchronized; an event completes once the
 *   open work launched before it has ended, and synchronizing the event
 *   ends that work, as in npusim.
 *
 * Device addresses are never dereferenced by the allocator, so none is
 * backed by memory. One device; the capacity comes from FAKECUDA_CAPACITY
 * (bytes) at the first call. Built as libcuda.so.1 because c10's
 * driver_api.cpp finds the driver with dlopen("libcuda.so.1", RTLD_NOLOAD).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda.h"
#include "cuda_runtime_api.h"
#include "fakecuda.h"
#include "sim/extent_map.h"

#define PAGE ((uint64_t)2 << 20)
#define DEVICE_BASE ((uint64_t)0x7e0000000000)
#define VM_BASE ((uint64_t)0x7c0000000000)
#define MAX_HANDLES 65536

struct CUstream_st {
	uint64_t launched; /* open work launched */
	uint64_t ended;    /* open work ended */
};

struct CUevent_st {
	struct CUstream_st *stream; /* NULL: never recorded */
	uint64_t seq;               /* open work launched before it */
};

static struct {
	bool up;
	uint64_t capacity;
	uint64_t used;
	struct extent_map mem;   /* cudaMalloc pages */
	struct extent_map phys;  /* cuMemCreate pages */
	struct extent *handle[MAX_HANDLES];
	uint64_t vm_next;
	struct CUstream_st default_stream;
	struct CUstream_st **streams;
	size_t nstreams;
} fc;

static void fc_up(void)
{
	const char *cap = getenv("FAKECUDA_CAPACITY");

	if (fc.up)
		return;
	fc.capacity = cap ? strtoull(cap, NULL, 0) : (uint64_t)32 << 30;
	fc.capacity -= fc.capacity % PAGE;
	if (extent_map_init(&fc.mem, extent_span_pages(fc.capacity / PAGE, PAGE)) != 0 ||
	    extent_map_init(&fc.phys, extent_span_pages(fc.capacity / PAGE, PAGE)) != 0) {
		fprintf(stderr, "fakecuda: no memory for the device's page maps\n");
		abort();
	}
	fc.vm_next = VM_BASE;
	fc.up = true;
}

static struct CUstream_st *stream_of(cudaStream_t s)
{
	fc_up();
	return s ? s : &fc.default_stream;
}

void fakecuda_launch_open(cudaStream_t stream)
{
	stream_of(stream)->launched++;
}

/* Pages for `bytes` from map `m`, counted against the capacity. */
static int take_pages(struct extent_map *m, uint64_t bytes, struct extent **out)
{
	uint64_t npages = bytes / PAGE + (bytes % PAGE != 0);

	fc_up();
	if (npages > fc.capacity / PAGE || fc.used + npages * PAGE > fc.capacity)
		return -ENOMEM;
	if (extent_map_alloc(m, npages, out) < 0)
		return -ENOMEM;
	fc.used += npages * PAGE;
	return 0;
}

static void give_pages(struct extent_map *m, struct extent *e)
{
	fc.used -= e->npages * PAGE;
	extent_map_free(m, e);
}

/* ---- runtime: device ---- */

cudaError_t cudaGetLastError(void) { return cudaSuccess; }
cudaError_t cudaPeekAtLastError(void) { return cudaSuccess; }

const char *cudaGetErrorString(cudaError_t error)
{
	switch (error) {
	case cudaSuccess: return "no error";
	case cudaErrorMemoryAllocation: return "out of memory";
	case cudaErrorNotReady: return "device not ready";
	case cudaErrorNotSupported: return "operation not supported";
	default: return "unknown error";
	}
}

const char *cudaGetErrorName(cudaError_t error)
{
	return cudaGetErrorString(error);
}

cudaError_t cudaGetDeviceCount(int *count) { *count = 1; return cudaSuccess; }
cudaError_t cudaGetDevice(int *device) { *device = 0; return cudaSuccess; }

cudaError_t cudaSetDevice(int device)
{
	return device == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
	if (device != 0)
		return cudaErrorInvalidDevice;
	fc_up();
	memset(prop, 0, sizeof(*prop));
	snprintf(prop->name, sizeof(prop->name), "fakecuda");
	prop->totalGlobalMem = fc.capacity;
	prop->major = 9;
	prop->multiProcessorCount = 1;
	return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
	(void)device;
	*value = attr == cudaDevAttrComputeCapabilityMajor ? 9 : 0;
	return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *version) { *version = CUDA_VERSION; return cudaSuccess; }
cudaError_t cudaRuntimeGetVersion(int *version) { *version = CUDART_VERSION; return cudaSuccess; }

cudaError_t cudaDeviceSynchronize(void)
{
	fc_up();
	fc.default_stream.ended = fc.default_stream.launched;
	for (size_t i = 0; i < fc.nstreams; i++)
		fc.streams[i]->ended = fc.streams[i]->launched;
	return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags)
{
	(void)peer, (void)flags;
	return cudaErrorNotSupported;
}

cudaError_t cudaDeviceCanAccessPeer(int *can, int device, int peer)
{
	(void)device, (void)peer;
	*can = 0;
	return cudaSuccess;
}

/* Real devices: 0 (least) to -5; c10 sizes its pools by the range. */
cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
	*least = 0;
	*greatest = -5;
	return cudaSuccess;
}

/* ---- runtime: memory ---- */

cudaError_t cudaMalloc(void **ptr, size_t size)
{
	struct extent *e;

	if (take_pages(&fc.mem, size, &e) != 0)
		return cudaErrorMemoryAllocation;
	*ptr = (void *)(uintptr_t)(DEVICE_BASE + e->start * PAGE);
	return cudaSuccess;
}

cudaError_t cudaFree(void *ptr)
{
	uint64_t a = (uint64_t)(uintptr_t)ptr;
	struct extent *e;

	if (ptr == NULL)
		return cudaSuccess;
	fc_up();
	e = a >= DEVICE_BASE ? extent_map_find(&fc.mem, (a - DEVICE_BASE) / PAGE) : NULL;
	if (e == NULL)
		return cudaErrorInvalidValue;
	give_pages(&fc.mem, e);
	return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
{
	fc_up();
	*free = fc.capacity - fc.used;
	*total = fc.capacity;
	return cudaSuccess;
}

#define IGNORE(x) (void)(x)

cudaError_t cudaMallocManaged(void **ptr, size_t size, unsigned int flags)
{
	IGNORE(ptr), IGNORE(size), IGNORE(flags);
	return cudaErrorNotSupported;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	IGNORE(dst), IGNORE(src), IGNORE(count), IGNORE(kind);
	return cudaErrorNotSupported;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
			    enum cudaMemcpyKind kind, cudaStream_t stream)
{
	IGNORE(dst), IGNORE(src), IGNORE(count), IGNORE(kind), IGNORE(stream);
	return cudaErrorNotSupported;
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dst_device, const void *src, int src_device,
				size_t count, cudaStream_t stream)
{
	IGNORE(dst), IGNORE(dst_device), IGNORE(src), IGNORE(src_device), IGNORE(count);
	IGNORE(stream);
	return cudaErrorNotSupported;
}

cudaError_t cudaMemAdvise(const void *ptr, size_t count, enum cudaMemoryAdvise advice,
			  int device)
{
	IGNORE(ptr), IGNORE(count), IGNORE(advice), IGNORE(device);
	return cudaErrorNotSupported;
}

/* ---- runtime: streams and events ---- */

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *stream, unsigned int flags,
					 int priority)
{
	struct CUstream_st **v, *s;

	IGNORE(flags), IGNORE(priority);
	fc_up();
	v = realloc(fc.streams, (fc.nstreams + 1) * sizeof(*v));
	s = calloc(1, sizeof(*s));
	if (v == NULL || s == NULL) {
		free(s);
		return cudaErrorMemoryAllocation;
	}
	fc.streams = v;
	fc.streams[fc.nstreams++] = s;
	*stream = s;
	return cudaSuccess;
}

/* c10 never destroys its pool streams (leaky by design); neither do we. */
cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	IGNORE(stream);
	return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	struct CUstream_st *s = stream_of(stream);

	s->ended = s->launched;
	return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
	struct CUstream_st *s = stream_of(stream);

	return s->ended == s->launched ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
	IGNORE(stream), IGNORE(event), IGNORE(flags);
	return cudaSuccess;
}

cudaError_t cudaStreamGetPriority(cudaStream_t stream, int *priority)
{
	IGNORE(stream);
	*priority = 0;
	return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status)
{
	IGNORE(stream);
	*status = cudaStreamCaptureStatusNone;
	return cudaSuccess;
}

cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream,
				     enum cudaStreamCaptureStatus *status,
				     unsigned long long *id)
{
	IGNORE(stream);
	*status = cudaStreamCaptureStatusNone;
	if (id)
		*id = 0;
	return cudaSuccess;
}

cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
	IGNORE(mode);
	return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
	*event = calloc(1, sizeof(**event));
	return *event ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
	IGNORE(flags);
	return cudaEventCreate(event);
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	free(event);
	return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	event->stream = stream_of(stream);
	event->seq = event->stream->launched;
	return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
	if (event->stream == NULL || event->stream->ended >= event->seq)
		return cudaSuccess;
	return cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	if (event->stream != NULL && event->stream->ended < event->seq)
		event->stream->ended = event->seq;
	return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	IGNORE(start), IGNORE(end);
	*ms = 0;
	return cudaSuccess;
}

/* ---- runtime: what a fake device does not do ---- */

cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *ptr)
{
	IGNORE(handle), IGNORE(ptr);
	return cudaErrorNotSupported;
}

cudaError_t cudaIpcOpenMemHandle(void **ptr, cudaIpcMemHandle_t handle, unsigned int flags)
{
	IGNORE(ptr), IGNORE(handle), IGNORE(flags);
	return cudaErrorNotSupported;
}

cudaError_t cudaIpcCloseMemHandle(void *ptr)
{
	IGNORE(ptr);
	return cudaErrorNotSupported;
}

cudaError_t cudaMallocAsync(void **ptr, size_t size, cudaStream_t stream)
{
	IGNORE(ptr), IGNORE(size), IGNORE(stream);
	return cudaErrorNotSupported;
}

cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream)
{
	IGNORE(ptr), IGNORE(stream);
	return cudaErrorNotSupported;
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int device)
{
	IGNORE(pool), IGNORE(device);
	return cudaErrorNotSupported;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value)
{
	IGNORE(pool), IGNORE(attr), IGNORE(value);
	return cudaErrorNotSupported;
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value)
{
	IGNORE(pool), IGNORE(attr), IGNORE(value);
	return cudaErrorNotSupported;
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep)
{
	IGNORE(pool), IGNORE(keep);
	return cudaErrorNotSupported;
}

cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const struct cudaMemAccessDesc *desc,
				 size_t count)
{
	IGNORE(pool), IGNORE(desc), IGNORE(count);
	return cudaErrorNotSupported;
}

/* ---- driver: virtual memory ---- */

CUresult cuGetErrorString(CUresult error, const char **str)
{
	*str = error == CUDA_ERROR_OUT_OF_MEMORY ? "out of memory"
		: error == CUDA_SUCCESS ? "no error" : "operation not supported";
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attr, CUdevice dev)
{
	IGNORE(attr), IGNORE(dev);
	*value = 0;
	return CUDA_SUCCESS;
}

/* Reservations never overlap and are never reused: their order does not
 * matter to the allocator (one expandable segment per stream and pool). */
CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
			     unsigned long long flags)
{
	IGNORE(alignment), IGNORE(addr), IGNORE(flags);
	fc_up();
	*ptr = fc.vm_next;
	fc.vm_next += (size + PAGE - 1) / PAGE * PAGE + PAGE;
	return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	IGNORE(ptr), IGNORE(size);
	return CUDA_SUCCESS;
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
		     const CUmemAllocationProp *prop, unsigned long long flags)
{
	struct extent *e;

	IGNORE(prop), IGNORE(flags);
	if (take_pages(&fc.phys, size, &e) != 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (size_t i = 0; i < MAX_HANDLES; i++) {
		if (fc.handle[i] == NULL) {
			fc.handle[i] = e;
			*handle = i + 1;
			return CUDA_SUCCESS;
		}
	}
	give_pages(&fc.phys, e);
	return CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	if (handle == 0 || handle > MAX_HANDLES || fc.handle[handle - 1] == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	give_pages(&fc.phys, fc.handle[handle - 1]);
	fc.handle[handle - 1] = NULL;
	return CUDA_SUCCESS;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
		  CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	IGNORE(ptr), IGNORE(size), IGNORE(offset), IGNORE(handle), IGNORE(flags);
	return CUDA_SUCCESS;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	IGNORE(ptr), IGNORE(size);
	return CUDA_SUCCESS;
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
	IGNORE(ptr), IGNORE(size), IGNORE(desc), IGNORE(count);
	return CUDA_SUCCESS;
}

CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
				       CUmemAllocationGranularity_flags option)
{
	IGNORE(prop), IGNORE(option);
	*granularity = PAGE;
	return CUDA_SUCCESS;
}

CUresult cuMemExportToShareableHandle(void *handle, CUmemGenericAllocationHandle h,
				      CUmemAllocationHandleType type, unsigned long long flags)
{
	IGNORE(handle), IGNORE(h), IGNORE(type), IGNORE(flags);
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *os_handle,
					CUmemAllocationHandleType type)
{
	IGNORE(handle), IGNORE(os_handle), IGNORE(type);
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t n, CUstream stream)
{
	IGNORE(dst), IGNORE(value), IGNORE(n), IGNORE(stream);
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuStreamWriteValue32(CUstream stream, CUdeviceptr addr, unsigned int value,
			      unsigned int flags)
{
	IGNORE(stream), IGNORE(addr), IGNORE(value), IGNORE(flags);
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMulticastAddDevice(CUmemGenericAllocationHandle mc, CUdevice dev)
{
	IGNORE(mc), IGNORE(dev);
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMulticastBindMem(CUmemGenericAllocationHandle mc, size_t mc_offset,
			    CUmemGenericAllocationHandle mem, size_t mem_offset, size_t size,
			    unsigned long long flags)
{
	IGNORE(mc), IGNORE(mc_offset), IGNORE(mem), IGNORE(mem_offset), IGNORE(size);
	IGNORE(flags);
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuMulticastCreate(CUmemGenericAllocationHandle *mc, const CUmulticastObjectProp *prop)
{
	IGNORE(mc), IGNORE(prop);
	return CUDA_ERROR_NOT_SUPPORTED;
}
