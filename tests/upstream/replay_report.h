// replay_report.h - the report upstream_replay (PyTorch's allocator) and
// upstream_npu_replay (torch_npu's) print as npumem-replay prints it
// (memory_stats keys, graph_pools keys, one "segment ..." line a snapshot
// segment). Templates, since each upstream has its own types of the same
// shape.
#pragma once

#include <cstdint>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace upstream {

// The memory_stats keys both upstreams have, flattened as
// torch.cuda.memory_stats and torch.npu.memory_stats flatten them.
template <class Stats>
std::map<std::string, int64_t> stats_keys(const Stats& st) {
  std::map<std::string, int64_t> out;
  const char* pools[] = {"all", "small_pool", "large_pool"};
  auto stat = [&](const std::string& name, const auto& s) {
    out[name + ".current"] = s.current;
    out[name + ".peak"] = s.peak;
    out[name + ".allocated"] = s.allocated;
    out[name + ".freed"] = s.freed;
  };
  auto array = [&](const char* name, const auto& a) {
    for (int i = 0; i < 3; i++)
      stat(std::string(name) + "." + pools[i], a[i]);
  };
  array("allocation", st.allocation);
  array("segment", st.segment);
  array("active", st.active);
  array("inactive_split", st.inactive_split);
  array("allocated_bytes", st.allocated_bytes);
  array("reserved_bytes", st.reserved_bytes);
  array("active_bytes", st.active_bytes);
  array("inactive_split_bytes", st.inactive_split_bytes);
  array("requested_bytes", st.requested_bytes);
  out["num_alloc_retries"] = st.num_alloc_retries;
  out["num_ooms"] = st.num_ooms;
  stat("oversize_allocations", st.oversize_allocations);
  stat("oversize_segments", st.oversize_segments);
  out["max_split_size"] = st.max_split_size;
  return out;
}

inline void print_keys(const std::map<std::string, int64_t>& out) {
  for (const auto& [k, v] : out)
    std::cout << k << " " << v << "\n";
}

inline std::string pool_name(std::pair<uint64_t, uint64_t> id) {
  return std::to_string(id.first) + "_" + std::to_string(id.second);
}

// Module.cpp's block states.
template <class Block>
const char* state(const Block& b) {
  return b.allocated ? "active_allocated" : b.active ? "active_pending_free" : "inactive";
}

// graph_pools keys of each pool in `known` that use_count gives a count
// for (those still in the allocator), from the segments of the snapshot.
template <class Id, class Segment>
void print_pools(const std::vector<Id>& known, const std::vector<Segment>& segs,
                 const std::function<bool(Id, int*)>& use_count) {
  if (known.empty())
    return;
  uint64_t total = 0;
  for (Id id : known) {
    int uses;
    if (!use_count(id, &uses))
      continue;
    uint64_t allocated = 0, reserved = 0, n = 0;
    for (const auto& s : segs) {
      if (s.owner_private_pool_id != id)
        continue;
      n++;
      reserved += s.total_size;
      allocated += s.allocated_size;
    }
    std::string p = "graph_pools." + pool_name(id);
    std::cout << p << ".allocated_bytes " << allocated << "\n"
              << p << ".reserved_bytes " << reserved << "\n"
              << p << ".segments " << n << "\n"
              << p << ".use_count " << uses << "\n";
    total += reserved;
  }
  std::cout << "graph_pools.reserved_bytes " << total << "\n";
}

// One line a segment: its pool, stream (as npumem-replay numbers it),
// kind, sizes and blocks.
template <class Segment, class Stream>
void print_segments(const std::vector<Segment>& segs, const std::function<long(Stream)>& stream_number) {
  for (const auto& s : segs) {
    std::cout << "segment pool=" << pool_name(s.owner_private_pool_id)
              << " stream=" << stream_number(s.stream) << " " << (s.is_large ? "large" : "small")
              << (s.is_expandable ? " expandable" : "") << " total=" << s.total_size
              << " allocated=" << s.allocated_size << " active=" << s.active_size
              << " requested=" << s.requested_size << " blocks=";
    for (size_t i = 0; i < s.blocks.size(); i++)
      std::cout << (i ? "," : "") << s.blocks[i].size << ":" << state(s.blocks[i]);
    std::cout << "\n";
  }
}

}  // namespace upstream
