// upstream_host.cpp - the runtime hooks of ATen's CUDA host allocator
// (aten/src/ATen/cuda/CachingHostAllocator.cpp in PyTorch 2.6.0) on
// fakecuda, and the stats later ATen keeps (see upstream_host.h).
#include "upstream_host.h"

#include <algorithm>

namespace upstream {

void HostStat::increase(int64_t n) {
  current += n;
  allocated += n;
  peak = std::max(peak, current);
}

void HostStat::decrease(int64_t n) {
  current -= n;
  freed += n;
}

void HostAllocator::active(const HostBlock* block, int sign) {
  size_t list = c10::llvm::Log2_64_Ceil(block->size_);
  HostStat& requests = stats_.active_requests[list];
  HostStat& bytes = stats_.active_bytes[list];
  int64_t size = static_cast<int64_t>(block->size_);
  if (sign > 0) {
    requests.increase(1);
    bytes.increase(size);
  } else {
    requests.decrease(1);
    bytes.decrease(size);
  }
}

std::pair<void*, void*> HostAllocator::allocate(size_t size) {
  auto got = Base::allocate(size);
  if (got.second != nullptr)
    active(static_cast<HostBlock*>(got.second), +1);
  return got;
}

// Without stream uses the block goes straight back to its free list.
void HostAllocator::free(void* ctx) {
  auto* block = static_cast<HostBlock*>(ctx);
  bool at_once = block->streams_.empty();
  freeing_ = block;
  Base::free(ctx);
  freeing_ = nullptr;
  if (at_once)
    active(block, -1);
}

// cudaHostAlloc of `size` bytes.
void HostAllocator::allocate_host_memory(size_t size, void** ptr) {
  *ptr = reinterpret_cast<void*>(next_address_);
  next_address_ += (size + 4095) / 4096 * 4096;
  serials_[*ptr] = ++made_;
  stats_.allocations.increase(1);
  stats_.allocated_bytes.increase(static_cast<int64_t>(size));
}

// cudaFreeHost.
void HostAllocator::free_block(HostBlock* block) {
  serials_.erase(block->ptr_);
  stats_.allocations.decrease(1);
  stats_.allocated_bytes.decrease(static_cast<int64_t>(block->size_));
}

uint64_t HostAllocator::serial(void* ptr) const {
  auto it = serials_.find(ptr);
  return it == serials_.end() ? 0 : it->second;
}

// An event from the pool, recorded on the stream.
void HostAllocator::record_stream(std::optional<std::vector<HostEvent>>& events,
                                  c10::cuda::CUDAStream stream) {
  HostEvent e;
  cudaEventCreateWithFlags(&e.event, cudaEventDisableTiming);
  cudaEventRecord(e.event, stream.stream());
  e.block = freeing_;
  pending_[freeing_]++;
  events->push_back(std::move(e));
}

// cudaEventQuery; the caller frees the block once its last one is done.
bool HostAllocator::query_event(HostEvent& event) {
  if (cudaEventQuery(event.event) == cudaErrorNotReady)
    return false;
  if (--pending_[event.block] == 0) {
    pending_.erase(event.block);
    active(event.block, -1);
  }
  return true;
}

namespace {

void put(std::ostream& out, const std::string& name, const HostStat& s) {
  out << "host_memory_stats." << name << ".allocated " << s.allocated << "\n"
      << "host_memory_stats." << name << ".current " << s.current << "\n"
      << "host_memory_stats." << name << ".freed " << s.freed << "\n"
      << "host_memory_stats." << name << ".peak " << s.peak << "\n";
}

// Later ATen sums its per-list stats, peaks too ("best effort").
HostStat sum(const std::map<size_t, HostStat>& lists) {
  HostStat total;
  for (const auto& [list, s] : lists) {
    total.current += s.current;
    total.peak += s.peak;
    total.allocated += s.allocated;
    total.freed += s.freed;
  }
  return total;
}

}  // namespace

// Timings are left out: they are durations, never equal twice.
void HostAllocator::print_stats(std::ostream& out) const {
  put(out, "active_bytes", sum(stats_.active_bytes));
  put(out, "active_requests", sum(stats_.active_requests));
  put(out, "allocated_bytes", stats_.allocated_bytes);
  put(out, "allocations", stats_.allocations);
  out << "host_memory_stats.host_alloc_time.count " << stats_.allocations.allocated << "\n"
      << "host_memory_stats.host_free_time.count " << stats_.allocations.freed << "\n"
      << "host_memory_stats.num_host_alloc " << stats_.allocations.allocated << "\n"
      << "host_memory_stats.num_host_free " << stats_.allocations.freed << "\n";
}

}  // namespace upstream
