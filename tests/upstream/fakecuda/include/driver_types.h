/*
 * driver_types.h - the CUDA runtime's types and constants that c10/cuda
 * names (CUDA 12.4 values), for fakecuda.
 */
#ifndef FAKECUDA_DRIVER_TYPES_H
#define FAKECUDA_DRIVER_TYPES_H

#include <stddef.h>

#define CUDA_IPC_HANDLE_SIZE 64
#define cudaCpuDeviceId ((int)-1)
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaEventInterprocess 0x04
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaIpcMemLazyEnablePeerAccess 0x01

typedef enum cudaError {
	cudaSuccess = 0,
	cudaErrorInvalidValue = 1,
	cudaErrorMemoryAllocation = 2,
	cudaErrorInitializationError = 3,
	cudaErrorInsufficientDriver = 35,
	cudaErrorNoDevice = 100,
	cudaErrorInvalidDevice = 101,
	cudaErrorInvalidResourceHandle = 400,
	cudaErrorNotReady = 600,
	cudaErrorPeerAccessAlreadyEnabled = 704,
	cudaErrorNotSupported = 801,
	cudaErrorUnknown = 999,
} cudaError_t;

struct CUstream_st;
struct CUevent_st;
struct CUmemPoolHandle_st;
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
typedef struct CUmemPoolHandle_st *cudaMemPool_t;
typedef struct CUgraphExec_st *cudaGraphExec_t;

typedef struct cudaIpcMemHandle_st {
	char reserved[CUDA_IPC_HANDLE_SIZE];
} cudaIpcMemHandle_t;

enum cudaMemcpyKind {
	cudaMemcpyHostToHost = 0,
	cudaMemcpyHostToDevice = 1,
	cudaMemcpyDeviceToHost = 2,
	cudaMemcpyDeviceToDevice = 3,
	cudaMemcpyDefault = 4,
};

enum cudaStreamCaptureStatus {
	cudaStreamCaptureStatusNone = 0,
	cudaStreamCaptureStatusActive = 1,
	cudaStreamCaptureStatusInvalidated = 2,
};

enum cudaStreamCaptureMode {
	cudaStreamCaptureModeGlobal = 0,
	cudaStreamCaptureModeThreadLocal = 1,
	cudaStreamCaptureModeRelaxed = 2,
};

enum cudaDeviceAttr {
	cudaDevAttrComputeCapabilityMajor = 75,
	cudaDevAttrComputeCapabilityMinor = 76,
};

enum cudaMemoryAdvise {
	cudaMemAdviseSetPreferredLocation = 3,
	cudaMemAdviseSetAccessedBy = 5,
};

enum cudaMemPoolAttr {
	cudaMemPoolReuseFollowEventDependencies = 1,
	cudaMemPoolReuseAllowOpportunistic = 2,
	cudaMemPoolReuseAllowInternalDependencies = 3,
	cudaMemPoolAttrReleaseThreshold = 4,
	cudaMemPoolAttrReservedMemCurrent = 5,
	cudaMemPoolAttrReservedMemHigh = 6,
	cudaMemPoolAttrUsedMemCurrent = 7,
	cudaMemPoolAttrUsedMemHigh = 8,
};

enum cudaMemLocationType {
	cudaMemLocationTypeInvalid = 0,
	cudaMemLocationTypeDevice = 1,
};

enum cudaMemAccessFlags {
	cudaMemAccessFlagsProtNone = 0,
	cudaMemAccessFlagsProtRead = 1,
	cudaMemAccessFlagsProtReadWrite = 3,
};

struct cudaMemLocation {
	enum cudaMemLocationType type;
	int id;
};

struct cudaMemAccessDesc {
	struct cudaMemLocation location;
	enum cudaMemAccessFlags flags;
};

struct cudaDeviceProp {
	char name[256];
	size_t totalGlobalMem;
	int major;
	int minor;
	int multiProcessorCount;
	int pciBusID;
	int pciDeviceID;
	int pciDomainID;
};

#endif /* FAKECUDA_DRIVER_TYPES_H */
