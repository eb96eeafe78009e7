// Stand-in for torch_npu/csrc/profiler/npu_profiler.h: only the allocator
// type the caching allocator names; no profiler.
#pragma once
#include <cstdint>
namespace torch_npu { namespace profiler {
enum class MemoryAllocatorType : uint8_t { ALLOCATOR_INNER = 0, ALLOCATOR_EXTERNAL = 1 };
} }
