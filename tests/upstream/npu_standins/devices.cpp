// devices.cpp - stand-in for torch_npu/csrc/core/npu/NPUFunctions.cpp
// (device selection and contexts) and impl/NPUGuardImpl.cpp's device calls,
// for building torch_npu's NPUCachingAllocator.cpp as a test oracle on
// libnpusim. The same signatures (NPUFunctions.h), the same calls into
// the ACL runtime; upstream's lazy-init, thread-affinity and
// target-device bookkeeping are left out (one device, one thread).
#include "torch_npu/csrc/core/npu/NPUFunctions.h"
#include "torch_npu/csrc/core/npu/NPUStream.h"
#include "torch_npu/csrc/core/npu/impl/NPUGuardImpl.h"

#include <map>
#include <mutex>
#include <vector>

namespace c10_npu {
namespace {

// Upstream's used_devices: each device set, with its context.
std::recursive_mutex mtx;
std::map<int8_t, aclrtContext> used_devices;
thread_local int local_device = -1;

}  // namespace

c10::DeviceIndex device_count() noexcept
{
    uint32_t count = 0;
    return aclrtGetDeviceCount(&count) == ACL_ERROR_NONE ? static_cast<c10::DeviceIndex>(count) : 0;
}

aclError GetDevice(int32_t* device)
{
    if (local_device >= 0) {
        *device = local_device;
        return ACL_ERROR_NONE;
    }
    aclError err = aclrtGetDevice(device);
    if (err == ACL_ERROR_NONE) {
        local_device = *device;
    }
    return err;
}

aclError SetDevice(c10::DeviceIndex device)
{
    TORCH_CHECK(device >= 0, "device id must be positive!", PTA_ERROR(ErrCode::VALUE));
    if (local_device == device) {
        return ACL_ERROR_NONE;
    }
    aclError err = aclrtSetDevice(device);
    if (err == ACL_ERROR_NONE) {
        local_device = device;
        std::lock_guard<std::recursive_mutex> lock(mtx);
        if (used_devices.find(device) == used_devices.end()) {
            NPU_CHECK_ERROR_WITHOUT_UCE(aclrtGetCurrentContext(&used_devices[device]));
        }
    }
    return err;
}

aclError MaybeSetDevice(c10::DeviceIndex device)
{
    std::lock_guard<std::recursive_mutex> lock(mtx);
    if (used_devices.count(device) != 0) {
        NPU_CHECK_ERROR_WITHOUT_UCE(SetDevice(device));
    }
    return ACL_ERROR_NONE;
}

void LazySetDevice(c10::DeviceIndex device)
{
    NPU_CHECK_ERROR_WITHOUT_UCE(SetDevice(device));
}

std::vector<int8_t> GetUsedDevices()
{
    std::lock_guard<std::recursive_mutex> lock(mtx);
    std::vector<int8_t> list;
    for (const auto& it : used_devices) {
        list.push_back(it.first);
    }
    return list;
}

c10::DeviceIndex current_device()
{
    int device = 0;
    NPU_CHECK_ERROR_WITHOUT_UCE(GetDevice(&device));
    return static_cast<c10::DeviceIndex>(device);
}

aclrtContext GetDeviceContext(int32_t device)
{
    std::lock_guard<std::recursive_mutex> lock(mtx);
    auto it = used_devices.find(static_cast<int8_t>(device));
    return it == used_devices.end() ? nullptr : it->second;
}

namespace impl {

NPUGuardImpl::NPUGuardImpl(c10::DeviceType t)
{
    TORCH_INTERNAL_ASSERT(t == c10::DeviceType::PrivateUse1, "DeviceType must be NPU. Actual DeviceType is: ", t,
                          PTA_ERROR(ErrCode::PARAM));
}

c10::Device NPUGuardImpl::exchangeDevice(c10::Device d) const
{
    c10::Device old_device = getDevice();
    if (old_device.index() != d.index()) {
        NPU_CHECK_ERROR_WITHOUT_UCE(SetDevice(d.index()));
    }
    return old_device;
}

void NPUGuardImpl::uncheckedSetDevice(c10::Device d) const noexcept
{
    NPU_CHECK_WARN(MaybeSetDevice(d.index()));
}

c10::Device NPUGuardImpl::getDevice() const
{
    int device = 0;
    NPU_CHECK_ERROR_WITHOUT_UCE(GetDevice(&device));
    return c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device));
}

void NPUGuardImpl::setDevice(c10::Device d) const
{
    NPU_CHECK_ERROR_WITHOUT_UCE(SetDevice(d.index()));
}

c10::DeviceIndex NPUGuardImpl::deviceCount() const noexcept
{
    return device_count();
}

// What NPUGuard does besides selecting devices: nothing the allocator asks
// (its events are NPUEvents), so each says so if it is ever reached.
namespace {
[[noreturn]] void no_stand_in(const char* what)
{
    TORCH_CHECK(false, "NPUGuardImpl::", what, " has no stand-in", PTA_ERROR(ErrCode::NOT_SUPPORT));
}
}  // namespace

c10::Stream NPUGuardImpl::getStream(c10::Device d) const noexcept
{
    return getCurrentNPUStream(d.index()).unwrap();
}

c10::Stream NPUGuardImpl::getDefaultStream(c10::Device d) const
{
    return getDefaultNPUStream(d.index()).unwrap();
}

c10::Stream NPUGuardImpl::getNewStream(c10::Device d, int priority) const
{
    return getStreamFromPool(priority != 0, d.index()).unwrap();
}

c10::Stream NPUGuardImpl::getStreamFromGlobalPool(c10::Device d, bool isHighPriority) const
{
    return getStreamFromPool(isHighPriority, d.index()).unwrap();
}

c10::Stream NPUGuardImpl::exchangeStream(c10::Stream s) const noexcept
{
    NPUStream old = getCurrentNPUStream(s.device_index());
    setCurrentNPUStream(NPUStream(NPUStream::UNCHECKED, s));
    return old.unwrap();
}

void NPUGuardImpl::destroyEvent(void*, const c10::DeviceIndex) const noexcept {}
void NPUGuardImpl::record(void**, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag) const
{
    no_stand_in("record");
}
void NPUGuardImpl::block(void*, const c10::Stream&) const
{
    no_stand_in("block");
}
bool NPUGuardImpl::queryEvent(void*) const
{
    no_stand_in("queryEvent");
}
bool NPUGuardImpl::queryStream(const c10::Stream&) const
{
    no_stand_in("queryStream");
}
void NPUGuardImpl::synchronizeStream(const c10::Stream&) const
{
    no_stand_in("synchronizeStream");
}
void NPUGuardImpl::synchronizeEvent(void*) const
{
    no_stand_in("synchronizeEvent");
}
void NPUGuardImpl::synchronizeDevice(const c10::DeviceIndex) const
{
    no_stand_in("synchronizeDevice");
}
void NPUGuardImpl::recordDataPtrOnStream(const c10::DataPtr&, const c10::Stream&) const
{
    no_stand_in("recordDataPtrOnStream");
}
double NPUGuardImpl::elapsedTime(void*, void*, c10::DeviceIndex) const
{
    no_stand_in("elapsedTime");
}

}  // namespace impl
}  // namespace c10_npu
