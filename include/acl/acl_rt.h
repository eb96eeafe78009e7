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

/* Devices. The current device is per thread, as in CANN. */
ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t *deviceId);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCount(uint32_t *count);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDevice(void);

/* Memory on the current device. */
ACL_FUNC_VISIBILITY aclError aclrtMalloc(void **devPtr, size_t size,
					 aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtMallocAlign32(void **devPtr, size_t size,
						aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtFree(void *devPtr);
ACL_FUNC_VISIBILITY aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free,
					     size_t *total);
ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void *dst, size_t destMax,
					 const void *src, size_t count,
					 aclrtMemcpyKind kind);

/* Streams: NULL is the current device's default stream. */
ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream *stream);
ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream);

/* Events. */
ACL_FUNC_VISIBILITY aclError aclrtCreateEvent(aclrtEvent *event);
ACL_FUNC_VISIBILITY aclError aclrtRecordEvent(aclrtEvent event,
					      aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtQueryEventStatus(aclrtEvent event,
						   aclrtEventRecordedStatus *status);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEvent(aclrtEvent event);
ACL_FUNC_VISIBILITY aclError aclrtDestroyEvent(aclrtEvent event);

#ifdef __cplusplus
}
#endif

#endif /* ACL_ACL_RT_H */
