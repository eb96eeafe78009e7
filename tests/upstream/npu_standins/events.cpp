// events.cpp - stand-in for torch_npu/csrc/core/npu/NPUEvent.cpp, for
// building torch_npu's NPUCachingAllocator.cpp as a test oracle on
// libnpusim: the events the allocator records at a free with stream uses.
// Without a task queue upstream records, queries and destroys through the
// runtime at once, as here; libnpusim makes one kind of event
// (aclrtCreateEvent), whatever the flags.
#include "torch_npu/csrc/core/npu/NPUEvent.h"

namespace c10_npu {

NPUEvent::NPUEvent(unsigned int flags)
{
    flags_ = flags;
}

NPUEvent::~NPUEvent()
{
    if (is_created_) {
        aclrtDestroyEvent(event_);
    }
}

bool NPUEvent::query() const
{
    if (!is_created_) {
        return true;
    }
    aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    NPU_CHECK_ERROR(aclrtQueryEventStatus(event_, &status));
    return status == ACL_EVENT_RECORDED_STATUS_COMPLETE;
}

void NPUEvent::record(const NPUStream& stream)
{
    if (!is_created_) {
        device_index_ = stream.device_index();
        NPU_CHECK_ERROR(SetDevice(device_index_));
        NPU_CHECK_ERROR(aclrtCreateEvent(&event_));
        is_created_ = true;
    }
    TORCH_CHECK(device_index_ == stream.device_index(), "Event device ", device_index_,
                " does not match recording stream's device ", stream.device_index(), ".",
                PTA_ERROR(ErrCode::PARAM));
    NPU_CHECK_ERROR(aclrtRecordEvent(event_, stream.stream(false)));
    was_recorded_ = true;
}

}  // namespace c10_npu
