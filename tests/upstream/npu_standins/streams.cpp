// streams.cpp - stand-in for torch_npu/csrc/core/npu/NPUStream.cpp, for
// building torch_npu's NPUCachingAllocator.cpp as a test oracle on
// libnpusim. Stream ids are upstream's (makeStreamId: the pool's type in
// the bits above 5, the index below), which decides the order in which the
// allocator walks pending events; a pool's 32 streams are made with the
// runtime at the first getStreamFromPool, as initDeviceStreamState does.
// Without a task queue, stream() is the runtime's handle and
// npuSynchronizeDevice is the runtime's aclrtSynchronizeDevice with
// upstream's error handling.
#include "torch_npu/csrc/core/npu/NPUFunctions.h"
#include "torch_npu/csrc/core/npu/NPUStream.h"

#include <array>
#include <atomic>
#include <memory>

// npumemfs/npusim.h's, declared here: that header brings libnpusim's own
// ACL headers, which would clash with the ones torch_npu ships. The
// default stream comes with the simulated device, where torch_npu makes
// it when the device starts.
extern "C" aclrtStream npusim_default_stream(int device);

namespace c10_npu {
namespace {

constexpr int kStreamsPerPoolBits = 5;
constexpr int kStreamsPerPool = 1 << kStreamsPerPoolBits;
constexpr int kDefault = 0x0;
constexpr int kNormal = 0x3;
constexpr int kMaxDevices = 16;

std::array<aclrtStream, kStreamsPerPool> pool_streams[kMaxDevices];
std::once_flag pool_made[kMaxDevices];
std::atomic<uint32_t> pool_counter[kMaxDevices];
thread_local std::unique_ptr<c10::StreamId[]> current_ids;

c10::StreamId make_stream_id(int type, size_t index)
{
    return static_cast<c10::StreamId>((static_cast<size_t>(type) << kStreamsPerPoolBits) | index);
}

NPUStream from_id(c10::DeviceIndex device, c10::StreamId id)
{
    return NPUStream(NPUStream::UNCHECKED,
                     c10::Stream(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::PrivateUse1, device), id));
}

c10::StreamId& current_id(c10::DeviceIndex device)
{
    if (!current_ids) {
        current_ids = std::make_unique<c10::StreamId[]>(kMaxDevices);
        for (int i = 0; i < kMaxDevices; i++) {
            current_ids[i] = make_stream_id(kDefault, 0);
        }
    }
    return current_ids[device];
}

void make_pool(c10::DeviceIndex device)
{
    NPU_CHECK_ERROR(SetDevice(device));
    for (auto& s : pool_streams[device]) {
        NPU_CHECK_ERROR(aclrtCreateStream(&s));
    }
}

}  // namespace

NPUStream::NPUStream(c10::Stream stream) : stream_(stream)
{
    TORCH_CHECK(stream_.device_type() == c10::DeviceType::PrivateUse1, PTA_ERROR(ErrCode::TYPE));
}

aclrtStream NPUStream::stream() const
{
    return stream(true);
}

aclrtStream NPUStream::stream(const bool need_empty) const
{
    (void)need_empty;  // no task queue to empty
    c10::StreamId id = stream_.id();
    size_t index = static_cast<size_t>(id) & (kStreamsPerPool - 1);
    int type = static_cast<int>(static_cast<uint32_t>(id) >> kStreamsPerPoolBits);
    if (type == kDefault) {
        return npusim_default_stream(stream_.device_index());
    }
    TORCH_CHECK(type == kNormal, "stream type ", type, " has no stand-in", PTA_ERROR(ErrCode::NOT_SUPPORT));
    return pool_streams[stream_.device_index()][index];
}

NPUStream getStreamFromPool(const bool isHighPriority, c10::DeviceIndex device_index)
{
    TORCH_CHECK(!isHighPriority, "high-priority streams have no stand-in", PTA_ERROR(ErrCode::NOT_SUPPORT));
    if (device_index == -1) {
        device_index = current_device();
    }
    std::call_once(pool_made[device_index], make_pool, device_index);
    uint32_t index = pool_counter[device_index]++ % kStreamsPerPool;
    return from_id(device_index, make_stream_id(kNormal, index));
}

NPUStream getDefaultNPUStream(c10::DeviceIndex device_index)
{
    if (device_index == -1) {
        device_index = current_device();
    }
    return from_id(device_index, make_stream_id(kDefault, 0));
}

NPUStream getCurrentNPUStream(c10::DeviceIndex device_index)
{
    if (device_index == -1) {
        device_index = current_device();
    }
    return from_id(device_index, current_id(device_index));
}

aclrtStream getCurrentNPUStreamNoWait(c10::DeviceIndex device_index)
{
    return getCurrentNPUStream(device_index).stream(false);
}

void setCurrentNPUStream(NPUStream stream)
{
    current_id(stream.device_index()) = stream.id();
}

NPUStatus emptyAllNPUStream(bool check_error)
{
    (void)check_error;
    return NPU_STATUS_SUCCESS;
}

bool npuSynchronizeDevice(bool check_error)
{
    auto acl_ret = aclrtSynchronizeDevice();
    if (acl_ret != ACL_ERROR_NONE) {
        CHECK_AND_THROW_ERROR_WITH_SPECIFIC_MESSAGE(acl_ret);
    }
    if (check_error) {
        NPU_CHECK_ERROR(acl_ret, "AclrtSynchronizeDeviceWithTimeout");
    } else {
        NPU_CHECK_WARN(acl_ret);
    }
    return acl_ret == ACL_ERROR_NONE;
}

}  // namespace c10_npu
