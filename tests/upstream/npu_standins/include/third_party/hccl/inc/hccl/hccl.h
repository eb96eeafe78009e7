// Stand-in for CANN's hccl/hccl.h (torch_npu's third_party/hccl): the
// types the allocator's headers name.
#pragma once
typedef enum { HCCL_SUCCESS = 0, HCCL_E_NOT_SUPPORT = 5 } HcclResult;
typedef void *HcclComm;
typedef enum { HCCL_COMM_CONFIG_DUMMY = 0 } HcclCommConfigCapability;
