// Stand-in for torch_npu/csrc/distributed/HCCLUtils.hpp: an HCCL
// communicator that has none (no collective is ever set up).
#pragma once
#include <unordered_set>
#include "third_party/hccl/inc/hccl/hccl.h"
namespace c10d_npu { struct HCCLComm { HcclComm getHcclComm() { return nullptr; } }; }
#define HCCL_CHECK_ERROR(x) ((void)(x))
