// options.cpp - stand-ins for what else NPUCachingAllocator.cpp calls in
// torch_npu, for building it as a test oracle on libnpusim:
//   register/OptionsManager.cpp    the environment switches it reads
//   sys_ctrl/npu_sys_ctrl.cpp      NpuSysCtrl (initialized: a device is up)
//   NPUException.cpp               error texts (CANN's message, no UCE),
//                                  warnings through c10's handler
//   GetCANNInfo.cpp                versions: the simulated CANN is new enough
//   NPURecovery.cpp                the data-unsafe flag (no UCE repair)
//   NPUWorkspaceAllocator.cpp      emptyCache (no workspace is ever taken)
//   interface/HcclInterface.cpp    memory ranges (no communicator)
// Each reads the same variable or gives what upstream gives on a machine
// without the feature.
#include "torch_npu/csrc/core/npu/GetCANNInfo.h"
#include "torch_npu/csrc/core/npu/NPUCachingAllocator.h"
#include "torch_npu/csrc/core/npu/NPURecovery.h"
#include "torch_npu/csrc/core/npu/NPUWorkspaceAllocator.h"
#include "torch_npu/csrc/core/npu/interface/HcclInterface.h"
#include "torch_npu/csrc/core/npu/register/OptionsManager.h"
#include "torch_npu/csrc/core/npu/sys_ctrl/npu_sys_ctrl.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace c10_npu {
namespace option {
namespace {

long env_long(const char* name, long otherwise)
{
    const char* v = std::getenv(name);
    return v != nullptr ? std::strtol(v, nullptr, 10) : otherwise;
}

}  // namespace

bool OptionsManager::IsHcclZeroCopyEnable()
{
    return env_long("TORCH_HCCL_ZERO_COPY", 0) != 0;
}

bool OptionsManager::isACLGlobalLogOn(aclLogLevel level)
{
    static const long threshold = env_long("ASCEND_GLOBAL_LOG_LEVEL", ACL_ERROR);
    return threshold <= level;
}

bool OptionsManager::CheckForceUncached()
{
    static const bool force_uncached = env_long("PYTORCH_NO_NPU_MEMORY_CACHING", 0) != 0;
    return force_uncached;
}

std::string OptionsManager::GetOomSnapshotDumpPath()
{
    const char* path = std::getenv("OOM_SNAPSHOT_PATH");
    return path != nullptr ? path : "./";
}

// BUILD_LIBTORCH: no Python to take a snapshot.
bool OptionsManager::IsOomSnapshotEnable()
{
    return false;
}

bool OptionsManager::IsCompactErrorOutput()
{
    static const bool compact = env_long("TORCH_NPU_COMPACT_ERROR_OUTPUT", 0) != 0;
    return compact;
}

void oom_observer(int64_t, int64_t, int64_t, int64_t) {}

}  // namespace option

NpuSysCtrl::NpuSysCtrl() : repeat_init_acl_flag_(true), init_flag_(true), lazy_init_flag_(true), device_id_(0) {}

NpuSysCtrl& NpuSysCtrl::GetInstance()
{
    static NpuSysCtrl instance;
    return instance;
}

bool NpuSysCtrl::GetInitFlag()
{
    return init_flag_;
}

// Upstream's rule: CANN's words or code for a failed allocation.
bool isCannOOM(const std::string& errMsg)
{
    return errMsg.find("EL0004") != std::string::npos ||
           errMsg.find("Failed to allocate memory") != std::string::npos;
}

const char* c10_npu_get_error_message()
{
    const char* msg = aclGetRecentErrMsg();
    return msg != nullptr ? msg : "";
}

// What handleDeviceError gives for an error that is no device fault (UCE,
// ECC, link, task abort): nothing.
std::string getDeviceErrorMessage(int errorCode)
{
    (void)errorCode;
    return "";
}

namespace {
MemUceInfo mem_uce_info;
bool npu_data_unsafe_flag = false;
}  // namespace

void set_mem_uce_info(MemUceInfo& info)
{
    mem_uce_info = info;
}

MemUceInfo get_mem_uce_info()
{
    return mem_uce_info;
}

bool get_npu_data_unsafe_flag()
{
    return npu_data_unsafe_flag;
}

void set_npu_data_unsafe_flag(bool flag)
{
    npu_data_unsafe_flag = flag;
}

namespace NPUWorkspaceAllocator {
void emptyCache(int device, bool check_error)
{
    (void)device;
    (void)check_error;
}
}  // namespace NPUWorkspaceAllocator

}  // namespace c10_npu

bool IsGteCANNVersion(const std::string version, const std::string module)
{
    (void)version;
    (void)module;
    return true;
}

bool IsGteDriverVersion(const std::string driverVersion)
{
    (void)driverVersion;
    return true;
}

void warn_(const ::c10::Warning& warning)
{
    ::c10::warn(warning);
}

// Upstream's "[ERROR] time (PID, Device, RankID) ERRxxxxx" tail, as with
// TORCH_NPU_COMPACT_ERROR_OUTPUT: the texts compared are the messages.
std::string formatErrorCode(SubModule submodule, ErrCode errorCode)
{
    (void)submodule;
    (void)errorCode;
    return "";
}

namespace at_npu {
namespace hccl {

HcclResult HcclCommSetMemoryRangeFace(HcclComm, void*, size_t, size_t, uint64_t)
{
    return HCCL_E_NOT_SUPPORT;
}

HcclResult HcclCommActivateCommMemoryFace(HcclComm, void*, size_t, size_t, aclrtDrvMemHandle, uint64_t)
{
    return HCCL_E_NOT_SUPPORT;
}

}  // namespace hccl
}  // namespace at_npu
