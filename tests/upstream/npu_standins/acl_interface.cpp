// acl_interface.cpp - stand-in for torch_npu/csrc/core/npu/interface/
// AclInterface.cpp: the c10_npu::acl wrappers NPUCachingAllocator.cpp
// calls, for building it as a test oracle on libnpusim. Upstream looks
// each function up in libascendcl (GET_FUNC) and does what it does when
// the function is missing; here the lookup is in the process, where
// libnpusim is, with the same fallbacks. HCCL memory ranges are left out:
// no communicator is ever passed.
#include "torch_npu/csrc/core/npu/interface/AclInterface.h"
#include "torch_npu/csrc/core/npu/NPUException.h"

#include <dlfcn.h>

namespace c10_npu {
namespace acl {
namespace {

template <typename F>
F find(const char* name)
{
    return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

}  // namespace

aclError AclrtMallocAlign32(void** devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    using Fn = aclError (*)(void**, size_t, aclrtMemMallocPolicy);
    static Fn func = find<Fn>("aclrtMallocAlign32");
    aclError ret = func != nullptr ? func(devPtr, size, policy) : aclrtMalloc(devPtr, size, policy);
    if (ret != ACL_RT_SUCCESS && policy == aclrtMemMallocPolicy::ACL_MEM_MALLOC_HUGE1G_ONLY) {
        policy = aclrtMemMallocPolicy::ACL_MEM_MALLOC_HUGE_FIRST;
        ret = func != nullptr ? func(devPtr, size, policy) : aclrtMalloc(devPtr, size, policy);
    }
    return ret;
}

aclError AclrtReserveMemAddress(void** virPtr, size_t size, size_t alignment, void* expectPtr, uint64_t flags,
                                HcclComm hcclComm)
{
    using Fn = aclError (*)(void**, size_t, size_t, void*, uint64_t);
    static Fn func = find<Fn>("aclrtReserveMemAddress");
    TORCH_CHECK(func, "Failed to find function ", "aclrtReserveMemAddress", PTA_ERROR(ErrCode::NOT_FOUND));
    TORCH_CHECK(hcclComm == nullptr, "no HCCL communicator in the stand-in", PTA_ERROR(ErrCode::NOT_SUPPORT));
    return func(virPtr, size, alignment, expectPtr, flags);
}

aclError AclrtReleaseMemAddress(void* virPtr, HcclComm hcclComm)
{
    using Fn = aclError (*)(void*);
    static Fn func = find<Fn>("aclrtReleaseMemAddress");
    TORCH_CHECK(func, "Failed to find function ", "aclrtReleaseMemAddress", PTA_ERROR(ErrCode::NOT_FOUND));
    TORCH_CHECK(hcclComm == nullptr, "no HCCL communicator in the stand-in", PTA_ERROR(ErrCode::NOT_SUPPORT));
    return func(virPtr);
}

aclError AclrtMallocPhysical(aclrtDrvMemHandle* handle, size_t size, const aclrtPhysicalMemProp* prop,
                             uint64_t flags)
{
    using Fn = aclError (*)(aclrtDrvMemHandle*, size_t, const aclrtPhysicalMemProp*, uint64_t);
    static Fn func = find<Fn>("aclrtMallocPhysical");
    TORCH_CHECK(func, "Failed to find function ", "aclrtMallocPhysical", PROF_ERROR(ErrCode::NOT_FOUND));
    aclError ret = func(handle, size, prop, flags);
    if (ret != ACL_RT_SUCCESS && prop->memAttr == ACL_HBM_MEM_HUGE1G) {
        aclrtPhysicalMemProp huge = *prop;
        huge.memAttr = ACL_HBM_MEM_HUGE;
        ret = func(handle, size, &huge, flags);
    }
    return ret;
}

aclError AclrtFreePhysical(aclrtDrvMemHandle handle)
{
    using Fn = aclError (*)(aclrtDrvMemHandle);
    static Fn func = find<Fn>("aclrtFreePhysical");
    TORCH_CHECK(func, "Failed to find function ", "aclrtFreePhysical", PROF_ERROR(ErrCode::NOT_FOUND));
    return func(handle);
}

aclError AclrtMapMem(void* virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags,
                     HcclComm hcclComm)
{
    using Fn = aclError (*)(void*, size_t, size_t, aclrtDrvMemHandle, uint64_t);
    static Fn func = find<Fn>("aclrtMapMem");
    TORCH_CHECK(func, "Failed to find function ", "aclrtMapMem", PTA_ERROR(ErrCode::NOT_FOUND));
    TORCH_CHECK(hcclComm == nullptr, "no HCCL communicator in the stand-in", PTA_ERROR(ErrCode::NOT_SUPPORT));
    return func(virPtr, size, offset, handle, flags);
}

aclError AclrtUnmapMem(void* virPtr, HcclComm hcclComm)
{
    using Fn = aclError (*)(void*);
    static Fn func = find<Fn>("aclrtUnmapMem");
    TORCH_CHECK(func, "Failed to find function ", "aclrtUnmapMem", PTA_ERROR(ErrCode::NOT_FOUND));
    TORCH_CHECK(hcclComm == nullptr, "no HCCL communicator in the stand-in", PTA_ERROR(ErrCode::NOT_SUPPORT));
    return func(virPtr);
}

aclError AclrtGetMemUsageInfo(uint32_t deviceId, aclrtMemUsageInfo* memUsageInfo, size_t inputNum, size_t* outputNum)
{
    using Fn = aclError (*)(uint32_t, aclrtMemUsageInfo*, size_t, size_t*);
    static Fn func = find<Fn>("aclrtGetMemUsageInfo");
    if (func == nullptr) {
        return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
    }
    return func(deviceId, memUsageInfo, inputNum, outputNum);
}

aclError AclrtPeekAtLastError(aclrtLastErrLevel flag)
{
    using Fn = aclError (*)(aclrtLastErrLevel);
    static Fn func = find<Fn>("aclrtPeekAtLastError");
    return func == nullptr ? ACL_ERROR_NONE : func(flag);
}

// Upstream asks CANN's version, the driver's and the SoC; the simulator
// has no aclrtMallocHostWithCfg.
bool AclrtMallocHostWithCfgExist()
{
    return false;
}

aclError AclrtIpcMemGetExportKey(void* devPtr, size_t size, char* key, size_t len, uint64_t flag)
{
    using Fn = aclError (*)(void*, size_t, char*, size_t, uint64_t);
    static Fn func = find<Fn>("aclrtIpcMemGetExportKey");
    TORCH_CHECK(func, "Failed to find function aclrtIpcMemGetExportKey", PTA_ERROR(ErrCode::NOT_FOUND));
    return func(devPtr, size, key, len, flag);
}

aclError AclrtIpcMemImportByKey(void** devPtr, const char* key, uint64_t flag)
{
    using Fn = aclError (*)(void**, const char*, uint64_t);
    static Fn func = find<Fn>("aclrtIpcMemImportByKey");
    TORCH_CHECK(func, "Failed to find function aclrtIpcMemImportByKey", PTA_ERROR(ErrCode::NOT_FOUND));
    return func(devPtr, key, flag);
}

aclError AclrtIpcMemClose(const char* key)
{
    using Fn = aclError (*)(const char*);
    static Fn func = find<Fn>("aclrtIpcMemClose");
    TORCH_CHECK(func, "Failed to find function aclrtIpcMemClose", PTA_ERROR(ErrCode::NOT_FOUND));
    return func(key);
}

aclError AclrtMemExportToShareableHandle(aclrtDrvMemHandle handle, aclrtMemHandleType handleType, uint64_t flags,
                                         uint64_t* shareableHandle)
{
    using Fn = aclError (*)(aclrtDrvMemHandle, aclrtMemHandleType, uint64_t, uint64_t*);
    static Fn func = find<Fn>("aclrtMemExportToShareableHandle");
    TORCH_CHECK(func, "Failed to find function aclrtMemExportToShareableHandle", PTA_ERROR(ErrCode::NOT_FOUND));
    return func(handle, handleType, flags, shareableHandle);
}

aclError AclrtMemImportFromShareableHandle(uint64_t shareableHandle, int32_t deviceId, aclrtDrvMemHandle* handle)
{
    using Fn = aclError (*)(uint64_t, int32_t, aclrtDrvMemHandle*);
    static Fn func = find<Fn>("aclrtMemImportFromShareableHandle");
    TORCH_CHECK(func, "Failed to find function aclrtMemImportFromShareableHandle", PTA_ERROR(ErrCode::NOT_FOUND));
    return func(shareableHandle, deviceId, handle);
}

}  // namespace acl
}  // namespace c10_npu
