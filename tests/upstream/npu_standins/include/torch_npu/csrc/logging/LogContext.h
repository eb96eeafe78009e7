// Stand-in for torch_npu/csrc/logging/LogContext.h (torch_npu's logger):
// the allocator's TORCH_NPU_MEMORY_LOG* lines are dropped.
#pragma once
#include <memory>
#include <string>
namespace npu_logging {
struct Logger { int getAllowLevel() const { return 99; } };
struct Logging { std::shared_ptr<Logger> getLogger(const std::string&) { return std::make_shared<Logger>(); } };
inline Logging& logging() { static Logging l; return l; }
}
#define TORCH_NPU_LOGD(l, ...) ((void)(l))
#define TORCH_NPU_LOGI(l, ...) ((void)(l))
#define TORCH_NPU_LOGW(l, ...) ((void)(l))
#define TORCH_NPU_LOGE(l, ...) ((void)(l))
