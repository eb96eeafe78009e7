// upstream_host.h - ATen's pinned host caching allocator as PyTorch 2.6.0
// has it: CachingHostAllocatorImpl (aten/src/ATen/core/CachingHostAllocator.h,
// unmodified, a template over a stream and an event type) with the four
// runtime hooks aten/src/ATen/cuda/CachingHostAllocator.cpp gives it,
// on fakecuda.
//
// 2.6.0 keeps no host stats (host_memory_stats() came later), so they are
// counted here where later ATen counts them, from what the hooks see:
// allocations and allocated_bytes at allocate_host_memory and free_block,
// active_requests and active_bytes per size list (summed, peaks too) from
// allocate until the block is back on its free list: at free without
// stream uses, else when query_event finds its last event complete.
// Host memory is never touched, so a block's address is only a number.
// Each block is named by the order in which cudaHostAlloc made it (1 for
// the first), as npumem-replay --format pins names them.
#pragma once

#include <ATen/core/CachingHostAllocator.h>
#include <c10/cuda/CUDAStream.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <ostream>
#include <utility>

namespace upstream {

using HostBlock = at::HostBlock<c10::cuda::CUDAStream>;

// A CUDA event recorded at a free, and the block it holds back.
struct HostEvent {
  cudaEvent_t event = nullptr;
  HostBlock* block = nullptr;

  HostEvent() = default;
  HostEvent(HostEvent&& o) noexcept : event(o.event), block(o.block) {
    o.event = nullptr;
  }
  HostEvent& operator=(HostEvent&& o) noexcept {
    std::swap(event, o.event);
    std::swap(block, o.block);
    return *this;
  }
  HostEvent(const HostEvent&) = delete;
  HostEvent& operator=(const HostEvent&) = delete;
  ~HostEvent() {
    if (event != nullptr)
      cudaEventDestroy(event);
  }
};

// c10's Stat: current, peak, allocated (sum of increases), freed.
struct HostStat {
  int64_t current = 0, peak = 0, allocated = 0, freed = 0;
  void increase(int64_t n);
  void decrease(int64_t n);
};

struct HostStats {
  HostStat allocations, allocated_bytes;
  std::map<size_t, HostStat> active_requests, active_bytes;  // by size list
};

class HostAllocator final
    : public at::CachingHostAllocatorImpl<c10::cuda::CUDAStream, HostEvent> {
  using Base = at::CachingHostAllocatorImpl<c10::cuda::CUDAStream, HostEvent>;

 public:
  std::pair<void*, void*> allocate(size_t size) override;
  void free(void* ctx) override;
  // torch.cuda.host_memory_stats(), flattened: "host_memory_stats.KEY VALUE".
  void print_stats(std::ostream& out) const;
  // The name of the block at ptr (from allocate), 0 for none.
  uint64_t serial(void* ptr) const;

 private:
  void allocate_host_memory(size_t size, void** ptr) override;
  void free_block(HostBlock* block) override;
  void record_stream(std::optional<std::vector<HostEvent>>& events,
                     c10::cuda::CUDAStream stream) override;
  bool query_event(HostEvent& event) override;

  void active(const HostBlock* block, int sign);

  HostStats stats_;
  std::map<const HostBlock*, size_t> pending_;  // events not yet complete
  HostBlock* freeing_ = nullptr;                // the block free() records for
  uintptr_t next_address_ = uintptr_t{1} << 44;
  std::map<void*, uint64_t> serials_;           // of the blocks not yet freed
  uint64_t made_ = 0;
};

}  // namespace upstream
